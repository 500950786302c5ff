// `npm start -- --example hello-async` as a user runs it: the async loop trains hello with the long-tail agent's TS
// runners and, side by side on the same store, two unchanged Agent-lightning 0.3 Python runners
// (agents/python/hello_runner.py, the shipped pins). Checked where the effects happened: every trained group's
// staleness as the proxy served it (the spans' policy steps) is within maxStepsOffPolicy, the Python runners' rollouts
// were trained on, and after `stop` the store holds no queued or running rollout of the run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startProcess, type ManagedProcess } from '../../common/processes';
import { StoreClient } from '../../store/client';
import { TERMINAL_ROLLOUT_STATUSES, type AttemptedRollout, type Rollout } from '../../store/types';
import { client, ROOT } from '../helpers/commands';
import { npmStart, npmStartEnv } from '../helpers/npm-start';
import { servedGroupsOf, servedStalenessViolations } from '../helpers/served-staleness';
import { aglVenv, pythonEnv } from '../interop/store-python';

const RUN = 'hello-async-local-tiny-test';
const K = 6; // the example's maxStepsOffPolicy ("async": {}: the run config's default)

test('hello-async with long-tail TS runners and Python 0.3 runners: served staleness within K, nothing left queued after stop', { timeout: 900_000 }, async () => {
  const venv = await aglVenv();
  const data = mkdtempSync(path.join(tmpdir(), 'agl-async-e2e-'));
  const args = ['--example', 'hello-async', '--runners', '6', '--model', 'local/tiny-test', '--data', data, '--keep-alive'];
  // A 2 s median delay per rollout: groups are still sampling whenever the stop lands.
  const start = await npmStart(args, await npmStartEnv({ AGL_LONGTAIL_MEDIAN_MS: '2000' }));
  const runners: ManagedProcess[] = [];
  try {
    const [, temporal, storeUrl] = await start.waitFor(/Temporal (127\.0\.0\.1:\d+), store (http:\/\/\S+),/);
    for (const id of ['0', '1']) {
      runners.push(
        await startProcess({
          name: `python-runner-${id}`, command: venv.python, args: ['agents/python/hello_runner.py', '--store', storeUrl!, '--worker-id', id],
          cwd: ROOT, env: pythonEnv(), readyLine: /python runner \d+ polling/, readyTimeoutMs: 180_000,
        }),
      );
    }
    // Progress is printed on a timer, so a short step may never have a line of its own: any step from 3 on will do.
    await start.waitFor(/\| step ([3-9]|1\d)\/~20 \|/, 600_000); // steps 0-2 are trained
    const stopped = await client(['stop', RUN, '--address', temporal!]);
    assert.equal(stopped.code, 0, stopped.stderr);

    // Nothing of the run is left for a runner to take, or running.
    const store = new StoreClient(storeUrl!);
    const rollouts: (Rollout | AttemptedRollout)[] = [];
    for (let offset = 0; ; offset += 1000) {
      const page = await store.queryRollouts({ idempotency_key_prefix: `${RUN}@`, limit: 1000, offset }, { timeoutMs: 30_000 });
      rollouts.push(...page.items);
      if (page.items.length < 1000) break;
    }
    // Every broken expectation is collected, so one run shows them all.
    const problems: string[] = [];
    const open = rollouts.filter((r) => !TERMINAL_ROLLOUT_STATUSES.includes(r.status));
    for (const r of open) problems.push(`left ${r.status} after the stop: ${r.metadata?.idempotency_key}`);
    const byStatus = JSON.stringify(rollouts.reduce<Record<string, number>>((n, r) => ({ ...n, [r.status]: (n[r.status] ?? 0) + 1 }), {}));
    if (!rollouts.some((r) => r.status === 'cancelled')) problems.push(`the groups still sampling at the stop were not cancelled in the store (${byStatus})`);

    // Staleness from the spans: every trained group within K; the run's own figures agree with them.
    const logPath = path.join(data, 'runs', RUN);
    const served = await servedGroupsOf(storeUrl!, RUN);
    assert.ok(served.length >= 3 * 16, `at least 3 steps of 16 groups trained (${served.length})`);
    problems.push(...servedStalenessViolations(served, K));
    const metrics = readFileSync(path.join(logPath, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    for (const m of metrics.filter((row) => row['async/groups_trained'] !== undefined)) {
      if (m['async/groups_mislabelled'] !== 0) problems.push(`step ${m.step}: async/groups_mislabelled ${m['async/groups_mislabelled']}`);
      const fromSpans = Math.max(...served.filter((g) => g.step === m.step).map((g) => g.staleness!));
      if (m['async/staleness_max'] !== fromSpans) problems.push(`step ${m.step}: async/staleness_max ${m['async/staleness_max']}, the spans say ${fromSpans}`);
    }
    assert.deepEqual(problems, []);

    // The Python runners took part: some trained rollout's attempt ran on a worker that is not a TS runner.
    const trainedKeys = new Set(served.map((g) => g.key));
    const workers = rollouts
      .filter((r) => [...trainedKeys].some((k) => String(r.metadata?.idempotency_key).includes(`/train/${k}/`)))
      .map((r) => ('attempt' in r ? r.attempt.worker_id : null));
    assert.ok(workers.some((w) => w && !w.startsWith('hello-longtail-')), `a Python runner's rollout was trained on (workers ${[...new Set(workers)].join(', ')})`);
    assert.doesNotMatch(runners.map((r) => r.output()).join('\n'), /Traceback/);
  } finally {
    for (const r of runners) await r.stop(2000);
    // SIGTERM, so npm start stops its stack: its services run in process groups of their own, which a SIGKILL to
    // npm start's group leaves running (they outlived this test by an hour).
    await start.proc.stop(15_000);
  }
});
