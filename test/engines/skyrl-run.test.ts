// The hello run on a real Qwen3 architecture through SkyRL's Tinker-API server (JAX backend, on CPU), with the
// whole stack as separate processes, and kill -9 of the engine mid-step and of the worker during the run. What is
// checked comes from where it happened: the engine's own request log (every optimizer step behind the final weights
// exactly once), the spans the proxy wrote (the engine trained on exactly the tokens that were rendered and sampled),
// and the trainer's logprobs against the sampler's (KL near 0: one model, one tokenizer, one renderer).
// The SkyRL environment is installed once (engines/skyrl/provision.ts) and found again from uv's cache after that.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import type { Stack } from '../../dev/stack';
import { startOrAttach } from '../../cli/run-commands';
import { readJsonl, runPaths } from '../../records/run-files';
import { progressQuery } from '../../workflows/messages';
import type { trainingRun } from '../../workflows/training-run';
import type { Progress } from '../../shared/run-types';
import { StoreClient } from '../../store/client';
import { PROXY_SPAN_NAME } from '../../proxy/span';
import { localRunConfig, startTestStack } from '../helpers/local-run';
import { lineageOf } from './skyrl-lineage';

const MODEL = 'Qwen/Qwen3-8B';
let stack: Stack | undefined;
let client: Client;
let dataDir = '';
let taskQueue = '';

before(async () => {
  ({ stack, dataDir, taskQueue } = await startTestStack('skyrl', {
    // The install and the tiny Qwen3 in the project's .data, as skyrl-provision.test.ts makes them: once per clone.
    engine: { name: 'skyrl', model: MODEL, tinyQwen3: true, backend: 'jax', maxLoraRank: 8, maxLoraAdapters: 4, installDir: path.resolve(__dirname, '..', '..', '.data') },
    initialModel: MODEL,
    renderer: 'qwen3',
    // Partial credit, so that a random model's answers still differ within a group and every step trains.
    agent: 'hello-dense',
    runners: 4,
    log: (l) => process.stderr.write(`[stack] ${l}\n`),
  }));
  client = new Client({ connection: await Connection.connect({ address: stack.temporal.address, connectTimeout: '60 seconds' }) });
});

after(async () => {
  await stack?.stop();
});

/** Polls the run's progress until `when` holds (the phase and batch the workflow reports). */
async function waitFor(handle: WorkflowHandle<typeof trainingRun>, when: (p: Progress) => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 480_000;
  while (Date.now() < deadline) {
    const p = await handle.query(progressQuery).catch(() => null);
    if (p && when(p)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the run never reached ${what}`);
}

test('hello trains on SkyRL through kill -9 of the engine and the worker, every step once by the engine', { timeout: 1_200_000 }, async () => {
  const steps = 4;
  const cfg = localRunConfig(stack!, dataDir, 'skyrl-hello', {
    modelName: MODEL,
    rendererName: 'qwen3',
    engine: { name: 'skyrl', backend: 'jax', maxLoraRank: 8 },
    loraRank: 8,
    learningRate: 1e-3,
    maxTokens: 12,
    evalEvery: 3,
    saveEvery: 3,
    rolloutTimeoutSeconds: 180,
    datasetBuilder: { batchSize: 4, groupSize: 4, seed: 7, trainDataset: Array.from({ length: 4 * steps }, (_, i) => String(i)), valDataset: ['500', '501'] },
  });
  const run = await startOrAttach(client, taskQueue, cfg);

  // The engine dies in the middle of a train step (its process group: API server and engine), then the worker.
  // A second into the step: forward_backward is on the engine.
  await waitFor(run.handle, (p) => p.phase === 'training' && p.batch === 1, 'the training phase of batch 1');
  await new Promise((r) => setTimeout(r, 1000));
  stack!.services.trainer.crash();
  await waitFor(run.handle, (p) => p.batch >= 3 && p.phase === 'training', 'the training phase of batch 3');
  await new Promise((r) => setTimeout(r, 1000));
  stack!.services.worker.crash();

  const result = await run.handle.result();
  assert.equal(result.batchesCompleted, steps);
  assert.ok(stack!.services.trainer.restarts >= 1, 'the engine was restarted');
  assert.ok(stack!.services.worker.restarts >= 1, 'the worker was restarted');

  const metrics = readJsonl(runPaths(cfg.logPath).metrics);
  assert.deepEqual(metrics.map((m) => m.step), Array.from({ length: steps }, (_, i) => i), 'one metrics row per step');
  const trained = metrics.filter((m) => m['train/skipped_empty_batch'] === 0 && m['train/skipped_trainer_refused'] === undefined);
  assert.ok(trained.length >= steps - 1, `steps trained: ${trained.length} of ${steps} (the dense reward gives every group an advantage)`);

  // Exactly once, from the engine: the saves behind the final state, newest first, each one optimizer step on top of
  // its parent, back to the initial state; a repeated step would show two, a lost one a missing name.
  const final = readJsonl(runPaths(cfg.logPath).checkpoints).find((c) => c.name === 'final');
  assert.ok(final, 'a final checkpoint row');
  const dbFile = path.join(dataDir, 'engines', 'skyrl-state', 'tinker.db');
  const lineage = lineageOf(dbFile, String(final.state_path));
  const initial = lineage.at(-1)!;
  assert.equal(initial.name, '000000', 'the chain ends at the initial state');
  assert.equal(initial.optimSteps, 0);
  const links = lineage.slice(0, -1);
  assert.equal(links.length, trained.length, 'one save per trained step behind the final weights');
  for (const link of links) {
    assert.equal(link.optimSteps, 1, `save ${link.name} of ${link.modelId}: exactly one optimizer step on its parent`);
    assert.equal(link.forwardBackwards, 1, `save ${link.name}: one forward_backward`);
  }
  assert.deepEqual(
    links.map((l) => Number(l.name)),
    [...links.map((l) => Number(l.name))].sort((a, b) => b - a),
    'the names run down the steps',
  );
  assert.ok(new Set(lineage.map((l) => l.modelId)).size >= 2, 'the run resumed on a fresh model (create_model, then load_weights)');

  // The engine trained on exactly the tokens the proxy rendered and sampled: every datum it received is one span's
  // prompt followed by its completion.
  const sequences = new Set<string>();
  const store = new StoreClient(stack!.storeUrl);
  const rollouts = await store.queryRollouts({ idempotency_key_prefix: `${cfg.runName}@`, limit: 1000 }, { timeoutMs: 30_000 });
  for (const r of rollouts.items) {
    const spans = (await store.querySpans(r.rollout_id, 'latest', {}, { timeoutMs: 30_000 })).items as unknown as { name: string; attributes?: Record<string, unknown> }[];
    for (const s of spans) {
      if (s.name !== PROXY_SPAN_NAME) continue;
      const prompt = s.attributes?.prompt_token_ids as number[] | undefined;
      const response = s.attributes?.response_token_ids as number[] | undefined;
      if (prompt && response) sequences.add([...prompt, ...response].join(','));
    }
  }
  const datums = trainedDatums(dbFile, new Set(links.map((l) => l.modelId)));
  assert.ok(datums.length >= links.length * 4, `datums the engine trained on: ${datums.length}`);
  for (const d of datums) assert.ok(sequences.has(d.join(',')), `a datum the proxy never served: ${d.slice(0, 12).join(',')}…`);

  // Sampler and trainer agree on every sampled token's logprob (one model, one tokenizer, one renderer).
  for (const m of trained) {
    const kl = m['optim/kl_sample_train_v1'];
    assert.equal(typeof kl, 'number', `step ${m.step} reports kl_sample_train_v1`);
    assert.ok(Math.abs(kl as number) < 1e-3, `step ${m.step}: sampler-trainer KL ${kl}`);
  }
});

/** The token sequences of the forward_backward requests the engine completed for `models`: model input + last target. */
function trainedDatums(dbFile: string, models: Set<string>): number[][] {
  const db = new Database(dbFile, { readonly: true });
  try {
    const rows = db.prepare("SELECT model_id, request_data FROM futures WHERE request_type = 'FORWARD_BACKWARD' AND status = 'COMPLETED'").all() as { model_id: string; request_data: string }[];
    const out: number[][] = [];
    for (const r of rows) {
      if (!models.has(r.model_id)) continue;
      const body = JSON.parse(r.request_data) as { data: { model_input: { chunks: { tokens?: number[] }[] }; loss_fn_inputs: { target_tokens: { data: number[] } } }[] };
      for (const d of body.data) {
        const input = d.model_input.chunks.flatMap((c) => c.tokens ?? []);
        out.push([...input, d.loss_fn_inputs.target_tokens.data.at(-1)!]);
      }
    }
    return out;
  } finally {
    db.close();
  }
}
