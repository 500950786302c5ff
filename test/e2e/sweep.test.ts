// A sweep (workflows/sweep.ts, cli/sweep-command.ts) on a real stack: 4 learning rates x 2 seeds started with
// `client sweep`, at most 4 training at once, successive halving after the eval of step 2, and the worker killed
// (-9) mid-sweep. Checked from where the effects happened, not from the sweep's own bookkeeping: each child's
// Temporal result and history (who got a stop update), its metrics and checkpoint rows in the store (the evals
// at the milestone, the final checkpoints), and the report page `client report <sweep>` writes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { recordHistory } from '../helpers/histories';
import type { Stack } from '../../dev/stack';
import { localRunInput, startTestStack } from '../helpers/local-run';
import { runRecordsOf } from '../helpers/run-records';
import { runCommand } from '../helpers/commands';
import type { SweepResult } from '../../shared/sweep-plan';
import type { TrainingRunResult } from '../../shared/run-types';

let stack: Stack | undefined;
let client: Client;
let dataDir = '';
let taskQueue = '';

before(async () => {
  // Partial-credit rewards, so learning rates give different evals (otherwise all rewards are 0).
  ({ stack, dataDir, taskQueue } = await startTestStack('sweep', { agent: 'hello-dense' }));
  client = new Client({ connection: await Connection.connect({ address: stack.temporal.address, connectTimeout: '60 seconds' }) });
});

after(async () => {
  await stack?.stop();
});

const NUM_BATCHES = 6;
const MILESTONE = 2;
const EVAL = 'test/env/all/reward/total';
const temporalArgs = () => ['--address', stack!.temporal.address, '--task-queue', taskQueue];

/** The child's metrics rows in the store, by step. */
async function metricsRows(runName: string): Promise<Map<number, Record<string, number>>> {
  return new Map((await runRecordsOf(stack!.storeUrl, runName, 'metrics')).map((r) => [r.step, JSON.parse(r.body) as Record<string, number>]));
}

test('a sweep of 4 configs x 2 seeds halves at a milestone, survives a worker kill -9, and ranks its children by eval', { timeout: 20 * 60_000 }, async () => {
  const base = localRunInput(stack!, dataDir, 'lr', {
    evalEvery: 2,
    saveEvery: 0,
    activityHeartbeatTimeoutSeconds: 10,
    datasetBuilder: { batchSize: 2, groupSize: 2, trainDataset: Array.from({ length: 2 * NUM_BATCHES }, (_, i) => String(i + 1)), valDataset: ['500', '501'] },
  });
  const file = path.join(dataDir, 'lr.run.json');
  writeFileSync(file, JSON.stringify(base));

  // A mistake first: an unknown key in --grid is named, and nothing starts.
  const bad = await runCommand('client.ts', ['sweep', file, '--grid', 'learningRat=1e-3,1e-2', ...temporalArgs()]);
  assert.equal(bad.code, 1, bad.stderr);
  assert.match(bad.stderr.trim().split('\n').at(-1)!, /^client sweep: --grid learningRat: unknown config key "learningRat" \(did you mean learningRate\?\)$/);
  assert.equal((await client.workflow.count('WorkflowType = "sweep"')).count, 0, 'nothing started');

  const lrs = ['1e-4', '3e-3', '3e-2', '1e-1'];
  const cli = await runCommand('client.ts', ['sweep', file, '--grid', `learningRate=${lrs.join(',')}`, '--seeds', '2', '--max-parallel', '4', '--early-stop', String(MILESTONE), ...temporalArgs()]);
  assert.equal(cli.code, 0, cli.stderr);
  assert.match(cli.stdout, /^started agl-sweep-lr-sweep: 4 configs x 2 seeds, at most 4 at once, halving at steps 2/);
  const names = lrs.flatMap((_, c) => [0, 1].map((s) => `lr-sweep-c${c}-s${s}`));

  // Kill the worker once a child has passed the milestone (the sweep is holding, stopping or starting children).
  for (;;) {
    const reached = await Promise.all(names.map((n) => metricsRows(n).then((m) => m.has(MILESTONE), () => false)));
    if (reached.some(Boolean)) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const restartsBefore = stack!.services.worker.restarts;
  stack!.services.worker.crash();
  await stack!.services.worker.whenUp();
  assert.ok(stack!.services.worker.restarts > restartsBefore, 'the worker was killed and came back');

  const sweepHandle = client.workflow.getHandle('agl-sweep-lr-sweep');
  const result = (await sweepHandle.result()) as SweepResult;
  await recordHistory('sweep-halving-worker-killed', await sweepHandle.fetchHistory(), {
    covers: 'sweep: 4 configs x 2 seeds, at most 4 at once, successive halving at step 2 (stop updates, resume signals to held children), the worker killed -9 mid-sweep',
    recordedBy: 'test/e2e/sweep.test.ts',
  });

  // Every child: how it ended (Temporal), its eval at the milestone and its last eval (store), its final checkpoint.
  const children = await Promise.all(
    names.map(async (runName) => {
      const handle = client.workflow.getHandle(`agl-run-${runName}`);
      const r = (await handle.result()) as TrainingRunResult;
      const history = await handle.fetchHistory();
      const stopUpdates = (history.events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'stop').length;
      const rows = await metricsRows(runName);
      const evals = [...rows.entries()].filter(([, m]) => typeof m[EVAL] === 'number').sort(([a], [b]) => a - b);
      const checkpoints = (await runRecordsOf(stack!.storeUrl, runName, 'checkpoint')).map((c) => JSON.parse(c.body) as { name: string; batch: number; final?: boolean });
      const sa = (await handle.describe()).searchAttributes as Record<string, unknown[]>;
      return { runName, r, stopUpdates, atMilestone: rows.get(MILESTONE)?.[EVAL], lastEval: evals.at(-1)?.[1][EVAL], checkpoints, sweepAttr: sa.AglSweep };
    }),
  );
  for (const c of children) {
    assert.deepEqual(c.sweepAttr, ['lr-sweep'], `${c.runName} carries the AglSweep search attribute`);
    assert.equal(typeof c.atMilestone, 'number', `${c.runName} logged an eval at step ${MILESTONE} (every child reaches the milestone)`);
  }
  const stopped = children.filter((c) => c.r.stoppedEarly);
  const kept = children.filter((c) => !c.r.stoppedEarly);
  assert.equal(stopped.length, 4, `the worse half stopped: ${children.map((c) => `${c.runName} ${c.r.batchesCompleted}`).join(', ')}`);
  for (const c of stopped) {
    assert.equal(c.stopUpdates, 1, `${c.runName} got the ordinary stop update`);
    assert.equal(c.r.batchesCompleted, MILESTONE + 1, `${c.runName} stopped right after the batch that evaluated the milestone, not one step later`);
    const final = c.checkpoints.find((k) => k.final);
    assert.ok(final && final.batch === c.r.batchesCompleted, `${c.runName} has a final checkpoint of its last step: ${JSON.stringify(c.checkpoints)}`);
  }
  for (const c of kept) {
    assert.equal(c.stopUpdates, 0, `${c.runName} was not stopped`);
    assert.equal(c.r.batchesCompleted, NUM_BATCHES, `${c.runName} ran to its end`);
    assert.ok(c.checkpoints.some((k) => k.final && k.name === 'final'), `${c.runName} saved its final checkpoint`);
  }
  // The halving went by the eval at the milestone: no stopped child scored above a kept one there.
  const worstKept = Math.min(...kept.map((c) => c.atMilestone!));
  const bestStopped = Math.max(...stopped.map((c) => c.atMilestone!));
  assert.ok(bestStopped <= worstKept, `stopped children scored at most ${bestStopped} at step ${MILESTONE}, kept ones at least ${worstKept}`);
  assert.ok(new Set(children.map((c) => c.atMilestone)).size > 1, 'the evals differ, so the halving had something to decide');

  // The ranking: by each child's last eval in the store, best first (ties: the child started first).
  const expected = [...children].sort((a, b) => b.lastEval! - a.lastEval! || names.indexOf(a.runName) - names.indexOf(b.runName)).map((c) => c.runName);
  assert.deepEqual(result.ranking, expected);

  // What the user sees: sweep-status ranks the children, list names their sweep, the report draws them best first.
  const status = await runCommand('client.ts', ['sweep-status', 'lr-sweep', ...temporalArgs()]);
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, /^sweep lr-sweep: COMPLETED, 8 runs$/m);
  assert.match(status.stdout, new RegExp(`^1\\. ${expected[0]}\\t`, 'm'));
  assert.match(status.stdout, /^milestone 2: kept (\S+, ){3}\S+; stopped (\S+, ){3}\S+$/m);
  const list = await runCommand('client.ts', ['list', ...temporalArgs()]);
  for (const n of names) assert.match(list.stdout, new RegExp(`^agl-run-${n}\\tCOMPLETED\\t.*\\tsweep lr-sweep\\t`, 'm'), list.stdout);
  const out = path.join(dataDir, 'sweep-report.html');
  const rep = await runCommand('client.ts', ['report', 'lr-sweep', '--out', out, ...temporalArgs()]);
  assert.equal(rep.code, 0, rep.stderr);
  const html = readFileSync(out, 'utf8');
  const rowOrder = [...html.matchAll(/<tr class="run-row"><td>\d+<\/td><td><b>([^<]+)<\/b>/g)].map((m) => m[1]);
  assert.deepEqual(rowOrder, expected, 'the report lists every child, best first');
});
