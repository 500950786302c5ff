// Python Agent-lightning v0.3 runners (LitAgentRunner + AgentOps tracer + the openai package) stand in for the
// TypeScript runners in a real run: the workflow, store, proxy and trainer are ours; the agents are theirs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startProcess, type ManagedProcess } from '../../common/processes';
import type { Stack } from '../../dev/stack';
import { localRunConfig, startTestStack } from '../helpers/local-run';
import { readJsonl, runPaths } from '../../records/run-files';
import { startOrAttach } from '../../cli/run-commands';
import { aglVenv, pythonEnv } from './store-python';

let stack: Stack | undefined;
const fleet: ManagedProcess[] = [];
let dataDir = '';
let taskQueue = '';

before(async () => {
  const venv = await aglVenv();
  ({ stack, dataDir, taskQueue } = await startTestStack('pyfleet', { runners: 0 }));
  for (let i = 0; i < 2; i++) {
    fleet.push(
      await startProcess({
        name: `py-runner-${i}`,
        command: venv.python,
        // The runner users start (README, "Bring your own agent").
        args: [path.join(__dirname, '..', '..', 'agents', 'python', 'hello_runner.py'), '--store', stack.storeUrl, '--worker-id', String(i)],
        env: pythonEnv(),
        readyLine: /python runner \d+ polling/,
        readyTimeoutMs: 120_000,
      }),
    );
  }
});

after(async () => {
  for (const p of fleet) await p.stop(2000);
  await stack?.stop();
});

test('a run completes with Python runners only, and trains on the token ids their calls produced', { timeout: 600_000 }, async () => {
  const client = new Client({ connection: await Connection.connect({ address: stack!.temporal.address, connectTimeout: '60 seconds' }) });
  const cfg = localRunConfig(stack!, dataDir, 'pyfleet', {
    maxTokens: 16,
    evalEvery: 0,
    saveEvery: 0,
    datasetBuilder: { batchSize: 2, groupSize: 2, trainDataset: ['1', '2', '3', '4'], valDataset: ['9'] },
  });
  const logPath = cfg.logPath;
  const run = await startOrAttach(client, taskQueue, cfg);
  const result = await run.handle.result();
  const runnerOutput = () => fleet.map((p) => p.output().slice(-3000)).join('\n---\n');
  assert.equal(result.batchesCompleted, 2);
  const metrics = readJsonl(runPaths(logPath).metrics);
  assert.equal(metrics.length, 2);
  for (const m of metrics) {
    assert.equal(m['env/all/by_group/frac_status_succeeded'], 1, `the Python runners finished every rollout; their output:\n${runnerOutput()}`);
    assert.ok((m['env/all/total_ac_tokens'] as number) > 0, 'the Python agents’ calls yielded trainable tokens');
    assert.equal(m['train/skipped_empty_batch'], 0);
  }
  const out = fleet.map((p) => p.output()).join('\n');
  assert.doesNotMatch(out, /Traceback/, 'no Python errors in the runners');
});
