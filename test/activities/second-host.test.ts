// A run's records do not depend on which host ran an activity (they live in the store): a train step retried by a
// worker on a second host (its own process and run directory) finds the first attempt's step record and does not
// step again, as the trainer's saved state shows; the run's files exported on two hosts are byte-identical with
// each step once, whichever host logged which step.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Stack } from '../../dev/stack';
import { localRunInput } from '../helpers/local-run';
import { prepareRun } from '../../activities/prepare-run';
import { initPolicy } from '../../activities/init-policy';
import { publishPolicy } from '../../activities/publish-policy';
import { collectRollouts } from '../../activities/collect-rollouts';
import { trainStep } from '../../activities/train-step';
import { logMetrics, saveCheckpoint } from '../../activities/record-run';
import { tinkerService } from '../../activities/services';
import { readJsonl, runPaths } from '../../records/run-files';
import { makeSecrets } from '../helpers/secure-stack';
import { runActivity, startActivityBench, type ActivityBench } from '../helpers/activity-bench';
import { weightsOf } from '../chaos/harness';
import type { AgentFunction } from '../../agents/runner';
import { helloAgent } from '../../agents/examples/hello';
import type { RunSettings } from '../../workflows/run-types';

// Rewards group member 1 only, so the step has a gradient and a second optimizer step would show in the weights.
const memberAgent: AgentFunction<string> = async (task, ctx) => {
  await helloAgent(task, ctx);
  return Number(ctx.rollout.metadata?.member ?? 0) === 1 ? 1 : 0;
};

let bench: ActivityBench | undefined;
let stack: Stack;
let dataDir: string;

before(async () => {
  bench = await startActivityBench('hosts', makeSecrets(), 4, memberAgent);
  ({ stack, dataDir } = bench);
});

after(async () => {
  await bench?.stop();
});

const root = path.resolve(__dirname, '../..');

/** Every state the local trainer has saved (<data>/runs/<model>/weights/<name>), with its weights' bytes' hash. */
function savedStates(trainerDir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const runs = path.join(trainerDir, 'runs');
  for (const model of readdirSync(runs)) {
    const weights = path.join(runs, model, 'weights');
    if (!existsSync(weights)) continue;
    for (const name of readdirSync(weights)) out[`${model}/${name}`] = weightsOf(trainerDir, `tinker://${model}/weights/${name}`).sha256;
  }
  return out;
}

test('a train step retried on a second host finds the step record: the trainer state is stepped once', { timeout: 300_000 }, async () => {
  const hostA = path.join(dataDir, 'host-a', 'runs', 'two-hosts');
  const raw = localRunInput(stack, dataDir, 'two-hosts', { logPath: hostA, datasetBuilder: { batchSize: 3, groupSize: 2, trainDataset: ['1', '2', '3'], valDataset: ['500'] } });
  const prepared = await runActivity(prepareRun, raw);
  const settings: RunSettings = { ...prepared.settings, instanceId: 'first-run-id' };
  const s0 = await runActivity(initPolicy, settings, 0);
  const resources = await runActivity(publishPolicy, settings, 0, 'train', s0);
  const collected = await runActivity(collectRollouts, settings, 0, resources, prepared.datasetSha256);
  const r1 = await runActivity(trainStep, settings, 0, collected, s0);
  assert.equal(r1.skipped, false);
  const trainerDir = path.join(dataDir, 'trainer');
  const stepped = weightsOf(trainerDir, r1.state.statePath);
  assert.notEqual(stepped.sha256, weightsOf(trainerDir, s0.statePath).sha256, 'the first attempt trained');
  assert.equal(stepped.adamStep, 1);
  const saved = (await tinkerService(stack.trainerUrl).listCheckpoints(r1.state.modelId)).length;
  const statesBefore = savedStates(trainerDir);

  // The retry runs on host B: another process, another run directory (empty), and a learning rate 100x the
  // first one's, so a step taken again, from the parent or on top, would leave other weights on the trainer.
  const hostB = path.join(dataDir, 'host-b', 'runs', 'two-hosts');
  const onB: RunSettings = { ...settings, logPath: hostB, learningRate: settings.learningRate * 100 };
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'test/helpers/train-step-elsewhere.ts', JSON.stringify([onB, 0, collected, s0])], {
    cwd: root, encoding: 'utf8', timeout: 120_000,
  });
  const r2 = JSON.parse(/^RESULT (.*)$/m.exec(out)![1]!) as typeof r1;
  // From the trainer: no state saved anywhere (no model stepped and saved again), and the state of step 1 is as
  // the first attempt left it, with one Adam step.
  assert.deepEqual(savedStates(trainerDir), statesBefore, 'host B saved no state on the trainer');
  assert.deepEqual(weightsOf(trainerDir, r1.state.statePath), stepped, 'the saved state of step 1 is as the first attempt left it');
  assert.equal((await tinkerService(stack.trainerUrl).listCheckpoints(r1.state.modelId)).length, saved, 'host B saved no state');
  assert.deepEqual(r2, r1, 'host B returns the committed step (same paths, same metrics)');
  assert.equal(existsSync(path.join(hostB, 'steps')), false, 'no step record on host B\'s disk');

  // The run's files, exported on both hosts whichever logged which step (and each retried on the other host).
  const onBFiles: RunSettings = { ...settings, logPath: hostB };
  const step = (s: number) => ({ 'env/all/reward/total': s / 4, 'optim/lr': settings.learningRate });
  const trace = (s: number) => [{ name: 'train', ph: 'X' as const, ts: s * 10, dur: 5, pid: 1, tid: 1 }];
  await runActivity(logMetrics, settings, 0, step(0), trace(0));
  await runActivity(logMetrics, onBFiles, 1, step(1), trace(1));
  await runActivity(logMetrics, onBFiles, 0, step(0), trace(0));
  await runActivity(saveCheckpoint, onBFiles, '000002', 2, r1.state, false);
  await runActivity(logMetrics, settings, 2, step(2), trace(2));
  await runActivity(saveCheckpoint, settings, '000002', 2, r1.state, false);
  await runActivity(logMetrics, onBFiles, 3, step(3), trace(3));
  await runActivity(logMetrics, settings, 3, step(3), trace(3));
  const [a, b] = [runPaths(hostA), runPaths(hostB)];
  assert.deepEqual(readJsonl(a.metrics).map((r) => r.step), [0, 1, 2, 3], 'each step once, in order');
  for (const f of ['metrics', 'checkpoints', 'trace'] as const) {
    assert.equal(readFileSync(b[f], 'utf8'), readFileSync(a[f], 'utf8'), `${f}: the same bytes on both hosts`);
  }
  assert.deepEqual(readJsonl(a.checkpoints).map((r) => r.name), ['000002']);
  assert.equal(readJsonl(a.trace).length, 4);
  // Host B never ran prepareRun, yet has the run's config (from the store).
  assert.equal(readFileSync(path.join(hostB, 'config.json'), 'utf8'), readFileSync(path.join(hostA, 'config.json'), 'utf8'));

  // `client export` on a third machine (here: another directory): the same files, and a report.
  const third = path.join(dataDir, 'host-c', 'two-hosts');
  const said = execFileSync(process.execPath, ['--import', 'tsx', 'client.ts', 'export', 'two-hosts', '--dir', third, '--store', stack.storeUrl], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  assert.match(said, /exported to/);
  for (const f of ['metrics', 'checkpoints', 'trace'] as const) {
    assert.equal(readFileSync(runPaths(third)[f], 'utf8'), readFileSync(a[f], 'utf8'), `client export: ${f}`);
  }
  assert.ok(existsSync(path.join(third, 'report.html')));
});
