// Every training activity, run twice with the same input against the real services (store, local trainer,
// proxy and runners as separate processes, all with access tokens on): the second run finds what the first
// made and returns the same answer. No second rollout, resource, policy switch, optimizer step or row.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Stack } from '../../dev/stack';
import { localRunInput } from '../helpers/local-run';
import { prepareRun } from '../../activities/prepare-run';
import { initPolicy } from '../../activities/init-policy';
import { publishPolicy } from '../../activities/publish-policy';
import { collectRollouts } from '../../activities/collect-rollouts';
import { groupsOf } from '../../activities/batch-ref';
import { runKey } from '../../activities/rollout-batch';
import { runEvaluation } from '../../activities/run-evaluation';
import { trainStep } from '../../activities/train-step';
import { logMetrics, saveCheckpoint } from '../../activities/record-run';
import { storeClient, tinkerService } from '../../activities/services';
import { trainingClientAt } from '../../activities/policy-client';
import { readJsonl, runPaths } from '../../records/run-files';
import { getPolicy } from '../../proxy/admin-client';
import type { RunConfigInput } from '../../config/run-config';
import { makeSecrets } from '../helpers/secure-stack';
import { runActivity, startActivityBench, type ActivityBench } from '../helpers/activity-bench';
import type { AgentFunction } from '../../agents/runner';
import { helloAgent } from '../../agents/examples/hello';

// The hello agent against the untrained tiny model earns 0 everywhere, which gives zero advantages and an
// optimizer step that changes nothing. This one calls the policy the same way but rewards group member 1, so
// the step has a gradient and a repeated step would show in the weights.
const memberAgent: AgentFunction<string> = async (task, ctx) => {
  await helloAgent(task, ctx);
  return Number(ctx.rollout.metadata?.member ?? 0) === 1 ? 1 : 0;
};

let stack: Stack;
let dataDir: string;
const secrets = makeSecrets();

let bench: ActivityBench | undefined;

before(async () => {
  bench = await startActivityBench('idem', secrets, 4, memberAgent);
  ({ stack, dataDir } = bench);
});

after(async () => {
  await bench?.stop();
});

/** Runs an activity twice, each time as a fresh attempt, and returns both results. */
async function twice<A extends unknown[], R>(fn: (...args: A) => Promise<R>, ...args: A): Promise<[R, R]> {
  const first = await runActivity(fn, ...args);
  const second = await runActivity(fn, ...args);
  return [first, second];
}

const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

test('each activity run twice gives the same outcome and creates nothing twice', { timeout: 300_000 }, async () => {
  const logPath = `${dataDir}/runs/idem`;
  const raw: RunConfigInput = localRunInput(stack, dataDir, 'idem', { logPath, datasetBuilder: { batchSize: 3, groupSize: 2, trainDataset: ['1', '2', '3', '4', '5', '6'], valDataset: ['500', '501'] } });
  const paths = runPaths(logPath);
  const store = storeClient(stack.storeUrl);

  // prepareRun: same settings and dataset hash; config.json and dataset.json written once.
  const [p1, p2] = await twice(prepareRun, raw);
  assert.deepEqual(p2, p1);
  const files = { config: sha(paths.config), dataset: sha(paths.dataset) };
  await runActivity(prepareRun, raw);
  assert.deepEqual({ config: sha(paths.config), dataset: sha(paths.dataset) }, files);
  const settings = p1.settings;

  // initPolicy: one model, one saved state.
  const [s1, s2] = await twice(initPolicy, settings, 0);
  assert.deepEqual(s2, s1);
  assert.match(s1.statePath, /^tinker:\/\/.+\/weights\/000000$/);
  const service = tinkerService(stack.trainerUrl);

  // publishPolicy: one proxy switch per (run, batch, purpose, step); same resources id.
  const switchesBefore = (await getPolicy(stack.proxyUrl)).switches;
  const [e1, e2] = await twice(publishPolicy, settings, 0, 'eval', s1);
  assert.equal(e2, e1);
  const afterEval = await getPolicy(stack.proxyUrl);
  assert.equal(afterEval.switches, switchesBefore + 1, 'the repeated switch is not a second switch');
  assert.equal(afterEval.policy?.samplerPath, s1.samplerPath);
  const resourcesBefore = (await store.statistics()).total_resources;
  await runActivity(publishPolicy, settings, 0, 'eval', s1);
  assert.equal((await store.statistics()).total_resources, resourcesBefore, 'no second resources row');

  // runEvaluation: the same validation rollouts, the same metrics.
  const rolloutsBeforeEval = (await store.statistics()).total_rollouts;
  const [m1, m2] = await twice(runEvaluation, settings, 0, e1, p1.datasetSha256);
  assert.deepEqual(m2, m1);
  assert.equal(typeof m1['test/env/all/reward/total'], 'number');
  assert.equal((await store.statistics()).total_rollouts - rolloutsBeforeEval, 2, 'one rollout per validation task');

  // collectRollouts: the same rollout ids in the same groups; batchSize x groupSize rollouts in the store.
  const [t1] = await twice(publishPolicy, settings, 0, 'train', s1);
  const rolloutsBefore = (await store.statistics()).total_rollouts;
  const [c1, c2] = await twice(collectRollouts, settings, 0, t1, p1.datasetSha256);
  assert.deepEqual(c2, c1);
  assert.deepEqual(c1.ref, { keyPrefix: `${runKey(settings)}/train/0/`, numGroups: 3, groupSize: 2 }, 'the batch by reference, not by ids');
  const groups = await groupsOf(store, c1);
  assert.equal(groups.length, 3);
  assert.equal(new Set(groups.flatMap((g) => g.rolloutIds)).size, 6);
  assert.equal((await store.statistics()).total_rollouts - rolloutsBefore, 6, 'no rollout enqueued twice');
  assert.equal(c1.counts.succeeded, 6);

  // trainStep: applied once. The second call returns the committed result; the trained model's weights are
  // the same after it (an extra optimizer step would change them) and no checkpoint is added.
  const parentHash = (await service.weightsInfo(s1.statePath)).weightsHash;
  const r1 = await runActivity(trainStep, settings, 0, c1, s1);
  assert.equal(r1.skipped, false);
  assert.equal(r1.state.step, 1);
  const held = await trainingClientAt(settings, r1.state);
  const hash1 = (await service.weightsInfo(await held.saveState('probe-after-first'))).weightsHash;
  assert.ok(hash1, 'the trainer reports a weights hash');
  assert.notEqual(hash1, parentHash, 'the first call did train');
  assert.equal(hash1, (await service.weightsInfo(r1.state.statePath)).weightsHash);
  const checkpoints = (await service.listCheckpoints(r1.state.modelId)).length;
  const r2 = await runActivity(trainStep, settings, 0, c1, s1);
  assert.deepEqual(r2, r1, 'same state paths and the same metrics (timings included: nothing ran again)');
  assert.equal((await service.listCheckpoints(r1.state.modelId)).length, checkpoints, 'no state saved by the second call');
  const heldAgain = await trainingClientAt(settings, r2.state);
  assert.equal(heldAgain, held);
  const hash2 = (await service.weightsInfo(await heldAgain.saveState('probe-after-second'))).weightsHash;
  assert.equal(hash2, hash1, 'weights unchanged by the second trainStep call');

  // saveCheckpoint and logMetrics: one row each.
  const [k1, k2] = await twice(saveCheckpoint, settings, '000001', 1, r1.state, false);
  assert.equal(k2, k1);
  const [, ] = await twice(logMetrics, settings, 0, { ...m1, ...r1.metrics }, [{ name: 'step', ph: 'X', ts: 0, dur: 1, pid: 1, tid: 1 }]);
  assert.deepEqual(readJsonl(paths.checkpoints).map((r) => r.name), ['000001']);
  const metricRows = readJsonl(paths.metrics);
  assert.deepEqual(metricRows.map((r) => r.step), [0]);
  assert.equal(readJsonl(paths.trace).length, 1, 'trace events written with the first write only');
});
