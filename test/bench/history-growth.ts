// Temporal history bytes per synchronous batch as the batch grows from 16 to 4,096 rollouts: the real workflow on
// a real dev server, the real prepareRun and collectRollouts against a real store with 64 trivial runners (no LLM
// call, reward 1), stand-ins for the trainer's activities (initPolicy, publishPolicy, trainStep, checkpoints,
// metrics: each takes and returns what the real one does, in size). Bytes are those of the encoded history events
// (what counts toward Temporal's limits) from one batch's publishPolicy to the next one's.
//   npm run bench -- history-growth [--sizes 16,256,1024,4096] [--batches 3] [--json FILE]
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { collectRollouts } from '../../activities/collect-rollouts';
import { prepareRun } from '../../activities/prepare-run';
import type { TrainingActivities } from '../../activities/types';
import { startRunners } from '../../agents/runner';
import { stopAllProcesses } from '../../common/processes';
import { StoreClient } from '../../store/client';
import { trainingRun } from '../../workflows';
import type { PolicyState } from '../../shared/run-types';
import { startTestTemporal, workflowBundle } from '../helpers/temporal';
import { flag, loadAverage, startStoreProcess, stringFlag, writeResult } from './bench-kit';

const args = process.argv.slice(2);
const SIZES = (stringFlag(args, 'sizes') ?? '16,256,1024,4096').split(',').map(Number);
const BATCHES = flag(args, 'batches', 3);
const GROUP = 16;

const state = (step: number): PolicyState => ({ modelId: 'bench-model', statePath: `tinker://bench-model/weights/${String(step).padStart(6, '0')}`, samplerPath: `tinker://bench-model/sampler_weights/${String(step).padStart(6, '0')}`, step });
/** What a real train step returns in metrics (the names the local trainer's steps log), at realistic values. */
const METRICS = ['env/all/reward/total', 'env/all/ac_tokens_per_turn', 'env/all/ob_tokens_per_turn', 'env/all/turns_per_episode', 'env/all/by_group/frac_mixed',
  'env/all/by_group/frac_all_good', 'env/all/by_group/frac_all_bad', 'env/all/by_group/frac_status_succeeded', 'optim/entropy', 'optim/kl_sample_train_v1', 'optim/kl_sample_train_v2',
  'optim/loss:sum', 'optim/grad_norm:mean', 'time/assemble_training_data', 'time/train_step', 'time/compute_kl_sample_train', 'time/save_checkpoint',
  'rollouts/skipped_triplets_no_token_ids', 'rollouts/skipped_triplets_empty', 'rollouts/missing_logprobs'];

function activities(storeUrl: string): TrainingActivities {
  const store = new StoreClient(storeUrl);
  const unused = async (): Promise<never> => { throw new Error('not used in this bench'); };
  return {
    prepareRun,
    collectRollouts,
    async initPolicy(_s, step) { return state(step); },
    async publishPolicy(s, batch, purpose) {
      const r = await store.addResources({ main_llm: { resource_type: 'proxy_llm', endpoint: 'http://127.0.0.1:9/v1', model: s.modelName, api_key: null, sampling_parameters: {} } }, { idempotencyKey: `${s.runName}/${purpose}/${batch}/${randomUUID()}` });
      return r.resources_id;
    },
    async trainStep(_s, _batch, _collected, policy) {
      return { state: state(policy.step + 1), metrics: Object.fromEntries(METRICS.map((k, i) => [k, 0.123456789 * (i + 1)])), skipped: false };
    },
    async saveCheckpoint(_s, name) { return name; },
    async logMetrics() {
      return undefined;
    },
    runEvaluation: unused,
    collectGroup: unused,
    cancelGroups: unused,
  };
}

interface Row { rollouts: number; batchSize: number; bytesPerBatch: number; eventsPerBatch: number; collectResultBytes: number; trainInputBytes: number }

/** Encoded bytes of the events of each batch (publishPolicy scheduled to the next one), averaged over batches. */
function perBatch(events: temporal.api.history.v1.IHistoryEvent[]): { bytes: number; events: number; collect: number; train: number } {
  const starts: number[] = [];
  const names = new Map<number, string>();
  events.forEach((e, i) => {
    const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (name) names.set(Number(e.eventId), name);
    if (name === 'publishPolicy') starts.push(i);
  });
  const size = (e: temporal.api.history.v1.IHistoryEvent) => temporal.api.history.v1.HistoryEvent.encode(e).finish().length;
  let bytes = 0;
  let count = 0;
  for (let b = 0; b + 1 < starts.length; b++) {
    for (let i = starts[b]!; i < starts[b + 1]!; i++) bytes += size(events[i]!);
    count += starts[b + 1]! - starts[b]!;
  }
  const payloadBytes = (p?: temporal.api.common.v1.IPayloads | null) => (p?.payloads ?? []).reduce((k, x) => k + (x.data?.length ?? 0), 0);
  const collect = events.find((e) => names.get(Number(e.activityTaskCompletedEventAttributes?.scheduledEventId)) === 'collectRollouts');
  const train = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'trainStep');
  const n = Math.max(1, starts.length - 1);
  return { bytes: bytes / n, events: count / n, collect: payloadBytes(collect?.activityTaskCompletedEventAttributes?.result), train: payloadBytes(train?.activityTaskScheduledEventAttributes?.input) };
}

async function main(): Promise<void> {
  const env = await startTestTemporal();
  const store = await startStoreProcess('normal');
  const runners = startRunners(64, () => 1, { storeUrl: store.url, pollIntervalMs: 50, log: () => {} });
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-history-bench-'));
  const rows: Row[] = [];
  try {
    const taskQueue = `history-${randomUUID()}`;
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities: activities(store.url) });
    await worker.runUntil(async () => {
      for (const rollouts of SIZES) {
        const batchSize = rollouts / GROUP >= 1 ? rollouts / GROUP : 1;
        const groupSize = rollouts / batchSize;
        const config = {
          runName: `history-${rollouts}`, learningRate: 1e-3, modelName: 'local/tiny-hello', rendererName: 'role_colon', storeAddress: store.url,
          logPath: path.join(dir, String(rollouts)), evalEvery: 0, saveEvery: 0, concurrency: rollouts,
          datasetBuilder: { batchSize, groupSize, trainDataset: Array.from({ length: batchSize * BATCHES }, (_, i) => `task ${i}`), valDataset: ['unused'] },
        };
        const handle = await env.client.workflow.start(trainingRun, { taskQueue, workflowId: `history-${rollouts}-${randomUUID()}`, args: [{ config }] });
        await handle.result();
        const { events } = await handle.fetchHistory();
        const m = perBatch(events ?? []);
        rows.push({ rollouts, batchSize, bytesPerBatch: m.bytes, eventsPerBatch: m.events, collectResultBytes: m.collect, trainInputBytes: m.train });
        console.log(`${String(rollouts).padStart(5)} rollouts/batch (${batchSize} x ${groupSize}): ${(m.bytes / 1024).toFixed(1)} KiB and ${m.events} events per batch; collectRollouts result ${m.collect} B, trainStep input ${m.train} B`);
      }
    });
    const first = rows[0]!;
    const last = rows.at(-1)!;
    console.log(`history bytes per batch at ${last.rollouts} rollouts = ${(last.bytesPerBatch / first.bytesPerBatch).toFixed(2)} x those at ${first.rollouts}; load average ${loadAverage()}`);
    writeResult(args, { rows, ratio: last.bytesPerBatch / first.bytesPerBatch, load: loadAverage() });
  } finally {
    await runners.stop();
    await store.close();
    await env.teardown();
    rmSync(dir, { recursive: true, force: true });
    await stopAllProcesses();
  }
}

main().catch(async (err) => {
  console.error(err);
  await stopAllProcesses();
  process.exit(1);
});
