// The state and operations of the local Tinker-compatible trainer: sessions, training models (each with its
// seq_id queue), sampling sessions (frozen weights), checkpoints on disk, and futures for queued work.
// Handlers take decoded bodies and return JSON-able objects; the HTTP layer (server.ts) does the wire.
import { quote } from '../../common/front-door';
import { createHash, randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import type { BaseModelInfo, Engine, EngineDatum, LossFn, TrainableModel } from '../engine';
import type { ForwardBackwardResult } from '../../tinker/wire/types';
import { datumFromJson, datumToJson, modelInputFromJson, type ForwardBackwardRequest } from '../../tinker/wire/codec';
import { CheckpointStore, checkName, formatTinkerPath, parseTinkerPath, type RunInfo, type TinkerPath } from './checkpoints';
import { FUTURE_RETAIN_MS, FutureTable, RequestError, errorPayload, type FuturePayload } from './futures';
import { SamplerRegistry, type SamplingSession } from './sampler-registry';
import { SeqQueue } from './seq-queue';
import { Sessions } from './sessions';
import { diskUseReader, TrainerDisk, type TrainerDiskUse } from './disk-use';
import path from 'node:path';
import { trainerNow } from './clock';
import { CheckpointRest, expiry, ttlOf } from './checkpoint-rest';
import {
  adamFromWire,
  asBody,
  checkData,
  checkLossFn,
  checkLossFnConfig,
  checkPrompt,
  optBool,
  optInt,
  optString,
  reqInt,
  reqString,
  samplingParamsFromWire,
  type Body,
} from './validate';

interface TrainingRun {
  info: RunInfo;
  /** Resolves once create_model's future has built the model. */
  model: Promise<TrainableModel>;
  queue: SeqQueue;
  lastRequestTime: string;
}

export interface TinkerServiceOptions {
  engine: Engine;
  dataDir: string;
  /** How long retrieve_future holds a pending request before answering try_again. */
  longPollMs?: number;
  gapTimeoutMs?: number;
  /** Frozen weight sets kept in memory; the least recently used beyond this are dropped (default 32). */
  maxLoadedSamplers?: number;
  /** A session without a heartbeat for this long loses its models and snapshots (default 15 min). */
  sessionTtlMs?: number;
}

export class TinkerService {
  readonly futures: FutureTable;
  /** A full disk under the data directory: failed writes name it, health says disk_full (disk-use.ts). */
  readonly disk: TrainerDisk;
  /** Bytes under the data directory and room left on its volume (health route). */
  readonly diskUse: () => Promise<TrainerDiskUse | undefined>;
  readonly checkpoints: CheckpointStore;
  private readonly engine: Engine;
  readonly sessions = new Sessions();
  /** weights_info and the training_runs REST routes. */
  readonly rest: CheckpointRest;
  private readonly clones = new Map<string, number>();
  private readonly runs = new Map<string, TrainingRun>();
  private readonly createModelFutures = new Map<string, string>();
  private readonly samplers: SamplerRegistry;
  private readonly sampleRequests = new Map<string, { requestId: string; fingerprint: string; at: number }>();
  readonly longPollMs: number;
  private readonly gapTimeoutMs: number;
  private readonly sessionTtlMs: number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(opts: TinkerServiceOptions) {
    this.engine = opts.engine;
    this.disk = new TrainerDisk(path.resolve(opts.dataDir));
    this.futures = new FutureTable(undefined, undefined, undefined, (err) => errorPayload(err, this.disk));
    this.checkpoints = new CheckpointStore(opts.dataDir);
    this.diskUse = diskUseReader(opts.dataDir);
    this.rest = new CheckpointRest(this.checkpoints, (id) => this.runs.get(id));
    this.longPollMs = opts.longPollMs ?? 25_000;
    this.gapTimeoutMs = opts.gapTimeoutMs ?? 60_000;
    this.samplers = new SamplerRegistry(opts.engine, this.checkpoints, opts.maxLoadedSamplers ?? 32);
    this.sessionTtlMs = opts.sessionTtlMs ?? 15 * 60_000;
    this.sweeper = setInterval(() => {
      this.expireSessions();
      void this.sweepExpired().catch(() => undefined);
    }, Math.min(60_000, this.sessionTtlMs)).unref();
  }

  close(): void {
    clearInterval(this.sweeper);
  }

  /** Re-registers what an earlier life of this trainer left on disk. */
  async restore(): Promise<void> {
    // What expired while the trainer was down goes first, so no session is restored onto it.
    await this.sweepExpired().catch(() => undefined);
    return this.samplers.restore();
  }

  /** Deletes the checkpoints past their expiry, and the sampling sessions on them (else one is kept per step for ever). */
  async sweepExpired(now = trainerNow()): Promise<void> {
    await this.forgetSamplersOn(await this.checkpoints.sweepExpired(now));
  }

  /** DELETE of a checkpoint (REST route): the sampling sessions on it go with it. */
  async deleteCheckpoint(modelId: string, checkpointId: string) {
    const out = await this.rest.deleteCheckpoint(modelId, checkpointId);
    await this.forgetSamplersOn([`tinker://${modelId}/${checkpointId}`]);
    return out;
  }

  private async forgetSamplersOn(paths: string[]): Promise<void> {
    if (paths.length === 0) return;
    const gone = new Set(paths);
    for (const id of this.samplers.forgetPaths(gone)) this.clones.delete(id);
    await this.checkpoints.dropSamplingSessionsOn(gone);
  }

  /** Like the hosted service: a session that stopped heartbeating takes its models and snapshots with it. */
  expireSessions(now = Date.now()): string[] {
    const expired: string[] = [];
    for (const id of this.sessions.expire(this.sessionTtlMs, now)) {
      expired.push(id);
      for (const modelId of this.runs.keys()) if (modelId.startsWith(`${id}:train:`)) this.runs.delete(modelId);
      this.samplers.dropEphemeral(`${id}:sample:`);
    }
    return expired;
  }

  baseModel(name: string): BaseModelInfo {
    const info = this.engine.baseModels().find((m) => m.name === name);
    if (!info) {
      throw new RequestError(`unknown base model ${quote(name)}; this trainer serves ${this.engine.baseModels().map((m) => m.name).join(', ')}`, 404);
    }
    return info;
  }

  // ---- direct endpoints ----

  capabilities() {
    return {
      supported_models: this.engine.baseModels().map((m) => ({
        model_name: m.name,
        max_context_length: m.maxContextLength,
        trainable: true,
        sampleable: true,
      })),
    };
  }

  async getInfo(b: Body) {
    const run = this.run(reqString(b, 'model_id'));
    const info = this.baseModel(run.info.baseModel);
    const model = await run.model;
    return {
      type: 'get_info',
      model_id: run.info.modelId,
      model_data: { arch: 'local', model_name: info.name, tokenizer_id: info.tokenizerName },
      is_lora: true,
      lora_rank: run.info.loraRank,
      model_name: info.name,
      // Extensions (ignored by the SDK): what a reattaching client needs.
      renderer_name: info.rendererName,
      next_seq_id: run.queue.nextSeqId(),
      weights_sha256: model.weightsHash(),
    };
  }

  /** A clone of a sampling session gets its own block of seq_ids (SDK 0.38 `sample_join_sampling_session`). */
  joinSamplingSession(b: Body) {
    const id = reqString(b, 'sampling_session_id');
    if (!this.samplers.get(id)) throw new RequestError(`unknown sampling_session_id ${quote(id)}`, 404);
    const n = (this.clones.get(id) ?? 0) + 1;
    this.clones.set(id, n);
    return { client_counter: n, type: 'join_sampling_session' };
  }

  sampler(id: string) {
    const s = this.samplers.get(id);
    if (!s) throw new RequestError(`unknown sampling session ${quote(id)}`, 404);
    return { sampler_id: s.id, base_model: s.baseModel, model_path: s.modelPath ?? null };
  }

  async createSamplingSession(b: Body) {
    const sessionId = reqString(b, 'session_id');
    this.sessions.requireOpen(sessionId);
    const seq = reqInt(b, 'sampling_session_seq_id', 0);
    const modelPath = optString(b, 'model_path');
    const baseModel = optString(b, 'base_model');
    if (!modelPath && !baseModel) throw new RequestError('create_sampling_session needs model_path or base_model');
    const id = `${sessionId}:sample:${seq}`;
    if (!this.samplers.get(id)) {
      let base = baseModel;
      if (modelPath) {
        const p = parseTinkerPath(modelPath);
        this.checkpoints.requireExisting(p);
        base = (await this.checkpoints.readRun(p.modelId))?.baseModel ?? base;
      }
      this.baseModel(base!);
      const session = this.samplers.lazy(id, modelPath, base);
      try {
        await this.samplers.weightsOf(session); // surface load errors now, as a direct error
      } catch (err) {
        this.samplers.delete(id);
        throw err;
      }
      await this.checkpoints.appendSamplingSession({ sampling_session_id: id, model_path: modelPath, base_model: base });
    }
    return { sampling_session_id: id, type: 'create_sampling_session' };
  }

  // ---- future endpoints: each returns {request_id, model_id?} at once ----

  createModel(b: Body) {
    const sessionId = reqString(b, 'session_id');
    this.sessions.requireOpen(sessionId);
    const modelSeq = reqInt(b, 'model_seq_id', 0);
    const baseModel = reqString(b, 'base_model');
    this.baseModel(baseModel);
    const lora = (b.lora_config ?? {}) as Body;
    const loraRank = optInt(lora, 'rank', 1) ?? 32;
    const seed = optInt(lora, 'seed', 0) ?? 0;
    const modelId = `${sessionId}:train:${modelSeq}`;
    const existing = this.createModelFutures.get(modelId);
    if (existing) return { request_id: existing, model_id: modelId };

    const requestId = this.futures.create();
    this.createModelFutures.set(modelId, requestId);
    const info: RunInfo = { modelId, baseModel, loraRank, seed, createdAt: new Date().toISOString() };
    const model = this.engine.createModel(baseModel, { loraRank, seed });
    model.catch(() => undefined); // observed through the future
    this.runs.set(modelId, { info, model, queue: new SeqQueue(1, this.gapTimeoutMs), lastRequestTime: info.createdAt });
    void this.futures.run(requestId, async () => {
      await model;
      await this.checkpoints.writeRun(info);
      return { kind: 'json', body: { model_id: modelId, type: 'create_model' } };
    });
    return { request_id: requestId, model_id: modelId };
  }

  forwardBackwardJson(b: Body, forwardOnly: boolean) {
    const run = this.run(reqString(b, 'model_id'));
    return this.enqueue(run, optInt(b, 'seq_id', 0), () => {
      const input = asBody(b[forwardOnly ? 'forward_input' : 'forward_backward_input'] ?? b.forward_backward_input);
      if (!Array.isArray(input.data)) throw new RequestError('data must be a list of datums');
      return this.forwardWork(run, {
        modelId: run.info.modelId,
        seqId: -1,
        data: input.data.map((d, i) => datumFromJson(d, `data[${i}]`)),
        lossFn: input.loss_fn as string,
        lossFnConfig: checkLossFnConfig(input.loss_fn_config),
        forwardOnly,
      });
    });
  }

  /** The protobuf forward_backward (decoded by the HTTP layer, or the reason it could not be). */
  forwardBackward(r: ForwardBackwardRequest) {
    const run = this.run(r.modelId);
    return this.enqueue(run, r.seqId > 0 ? r.seqId : undefined, () => this.forwardWork(run, r));
  }

  private forwardWork(run: TrainingRun, r: ForwardBackwardRequest) {
    const lossFn: LossFn = checkLossFn(r.lossFn);
    const data: EngineDatum[] = r.data;
    checkData(data, lossFn, this.baseModel(run.info.baseModel));
    recordReceived(run.info.modelId, r);
    const config = checkLossFnConfig(r.lossFnConfig, lossFn);
    return async (model: TrainableModel): Promise<FuturePayload> => {
      const out = model.forwardBackward(data, lossFn, config, r.forwardOnly);
      const result: ForwardBackwardResult = { lossFnOutputType: 'ArrayRecord', lossFnOutputs: out.lossFnOutputs, metrics: out.metrics };
      return { kind: 'forward_backward', result };
    };
  }

  optimStep(b: Body) {
    const run = this.run(reqString(b, 'model_id'));
    return this.enqueue(run, optInt(b, 'seq_id', 0), () => {
      const params = adamFromWire(b.adam_params);
      return async (model) => ({ kind: 'json', body: { metrics: model.optimStep(params), type: 'optim_step' } });
    });
  }

  saveWeights(b: Body) {
    const run = this.run(reqString(b, 'model_id'));
    const seq = optInt(b, 'seq_id', 0);
    return this.enqueue(run, seq, () => {
      const name = checkName(optString(b, 'path') ?? `seq-${seq ?? Date.now()}`);
      const overwrite = optBool(b, 'overwrite') ?? false;
      const ttl = ttlOf(b);
      const p: TinkerPath = { modelId: run.info.modelId, kind: 'weights', name };
      return async (model) => {
        const path = await this.checkpoints.save(p, overwrite, (dir) => model.saveState(dir), { weights_sha256: model.weightsHash(), ...expiry(ttl) });
        this.disk.wrote();
        return { kind: 'json', body: { path, type: 'save_weights' } };
      };
    });
  }

  saveWeightsForSampler(b: Body) {
    const run = this.run(reqString(b, 'model_id'));
    const seq = optInt(b, 'seq_id', 0);
    const sessionId = run.info.modelId.split(':train:')[0];
    return this.enqueue(run, seq, () => {
      const name = optString(b, 'path');
      const samplingSeq = optInt(b, 'sampling_session_seq_id', 0);
      if (name === undefined && samplingSeq === undefined) throw new RequestError('save_weights_for_sampler needs path or sampling_session_seq_id');
      if (name !== undefined) checkName(name);
      const kind = optString(b, 'kind') ?? 'snapshot';
      if (kind !== 'snapshot' && kind !== 'inflight') throw new RequestError(`kind must be "snapshot" or "inflight", got ${quote(kind)}`);
      const ttl = ttlOf(b);
      return async (model) => {
        const frozen = model.snapshot();
        if (name !== undefined) {
          const p: TinkerPath = { modelId: run.info.modelId, kind: 'sampler_weights', name: checkName(name) };
          const path = await this.checkpoints.save(p, true, (dir) => frozen.save(dir), expiry(ttl));
          this.disk.wrote();
          return { kind: 'json', body: { path, type: 'save_weights_for_sampler' } };
        }
        const id = `${sessionId}:sample:${samplingSeq}`;
        this.samplers.addEphemeral(id, run.info.baseModel, frozen);
        return { kind: 'json', body: { sampling_session_id: id, type: 'save_weights_for_sampler' } };
      };
    });
  }

  loadWeights(b: Body) {
    if (b.model_id === undefined || b.model_id === null) return this.createViaLoad(b);
    const run = this.run(reqString(b, 'model_id'));
    return this.enqueue(run, optInt(b, 'seq_id', 0), () => {
      const p = parseTinkerPath(reqString(b, 'path'));
      if (p.kind !== 'weights') throw new RequestError(`load_weights needs a tinker://…/weights/<name> path, got ${formatTinkerPath(p)}`);
      this.checkpoints.requireExisting(p);
      const withOptimizer = optBool(b, 'optimizer') ?? false;
      return async (model) => {
        const dir = await this.checkpoints.requireIntact(p);
        const source = await this.checkpoints.readRun(p.modelId);
        if (source && source.baseModel !== run.info.baseModel) {
          throw new RequestError(`checkpoint ${formatTinkerPath(p)} is of base model ${source.baseModel}, not ${run.info.baseModel}`);
        }
        await model.loadState(dir, withOptimizer);
        return { kind: 'json', body: { path: formatTinkerPath(p), model_id: run.info.modelId, type: 'load_weights' } };
      };
    });
  }

  /**
   * SDK 0.38's create_training_client_from_state*: one load_weights with session_id + model_seq_id creates
   * the model `<session>:train:<n>` from the checkpoint (its first request; later ones start at seq_id 1).
   */
  private async createViaLoadPrepare(b: Body) {
    const p = parseTinkerPath(reqString(b, 'path'));
    if (p.kind !== 'weights') throw new RequestError(`load_weights needs a tinker://…/weights/<name> path, got ${formatTinkerPath(p)}`);
    const dir = await this.checkpoints.requireIntact(p);
    const source = await this.checkpoints.readRun(p.modelId);
    if (!source) throw new RequestError(`no run metadata for ${p.modelId}`, 404);
    return { p, dir, source };
  }

  async createViaLoad(b: Body) {
    const sessionId = reqString(b, 'session_id');
    this.sessions.requireOpen(sessionId);
    const modelSeq = reqInt(b, 'model_seq_id', 0);
    const modelId = `${sessionId}:train:${modelSeq}`;
    const existing = this.createModelFutures.get(modelId);
    if (existing) return { request_id: existing, model_id: modelId };
    const { p, dir, source } = await this.createViaLoadPrepare(b);
    const baseModel = optString(b, 'base_model') ?? source.baseModel;
    if (baseModel !== source.baseModel) throw new RequestError(`checkpoint ${formatTinkerPath(p)} is of base model ${source.baseModel}, not ${baseModel}`);
    this.baseModel(baseModel);
    const withOptimizer = optBool(b, 'optimizer') ?? false;
    const requestId = this.futures.create();
    this.createModelFutures.set(modelId, requestId);
    const info: RunInfo = { modelId, baseModel, loraRank: source.loraRank, seed: source.seed, createdAt: new Date().toISOString() };
    const model = (async () => {
      const m = await this.engine.createModel(baseModel, { loraRank: info.loraRank, seed: info.seed });
      await m.loadState(dir, withOptimizer);
      return m;
    })();
    model.catch(() => undefined);
    this.runs.set(modelId, { info, model, queue: new SeqQueue(1, this.gapTimeoutMs), lastRequestTime: info.createdAt });
    void this.futures.run(requestId, async () => {
      await model;
      await this.checkpoints.writeRun(info);
      return { kind: 'json', body: { path: formatTinkerPath(p), model_id: modelId, type: 'load_weights' } };
    });
    return { request_id: requestId, model_id: modelId };
  }

  unloadModel(b: Body) {
    const modelId = reqString(b, 'model_id');
    const run = this.run(modelId);
    const requestId = this.futures.create();
    void this.futures.run(requestId, async () => {
      await run.model.catch(() => undefined);
      this.runs.delete(modelId);
      return { kind: 'json', body: { model_id: modelId, type: 'unload_model' } };
    });
    return { request_id: requestId, model_id: modelId };
  }

  sample(b: Body) {
    const samplerId = optString(b, 'sampling_session_id');
    let session: SamplingSession | undefined;
    if (samplerId) {
      session = this.samplers.get(samplerId);
      if (!session) throw new RequestError(`unknown sampling_session_id ${quote(samplerId)}`, 404);
    } else {
      // Sampling without a session (never done by the SDK since 0.3): base models only.
      const baseModel = optString(b, 'base_model');
      if (!baseModel) throw new RequestError('asample needs sampling_session_id (or base_model); create a sampling session for a model_path');
      this.baseModel(baseModel);
      session = this.samplers.lazy(`adhoc-${randomUUID()}`, undefined, baseModel);
    }
    const info = this.baseModel(session.baseModel);
    const prompt = modelInputFromJson(b.prompt, 'prompt');
    checkPrompt(prompt, info);
    const params = samplingParamsFromWire(b.sampling_params, prompt.length, info);
    const numSamples = optInt(b, 'num_samples', 1) ?? 1;
    if (numSamples > 128) throw new RequestError('num_samples must be at most 128');
    const wantPromptLogprobs = optBool(b, 'prompt_logprobs') ?? false;
    const seq = optInt(b, 'seq_id', 0);
    const key = seq === undefined ? undefined : `${session.id}#${seq}`;
    // SDK 0.38 requires one id per requested sample in the promise (they become SampledSequence.sequence_id).
    const promise = (id: string) => ({ request_id: id, sample_sequence_ids: sequenceIds(id, numSamples) });
    // A retry repeats the same body; the same seq_id with another body is a client bug, not a retry.
    // The prompt as sent (an image's bytes, not just its placeholder positions), hashed.
    const promptHash = createHash('sha256').update(JSON.stringify(b.prompt)).digest('hex');
    const fingerprint = JSON.stringify([promptHash, b.sampling_params, numSamples, wantPromptLogprobs]);
    const existing = key ? this.sampleRequests.get(key) : undefined;
    if (existing) {
      if (existing.fingerprint !== fingerprint) throw new RequestError(`seq_id ${seq} was already used for another request in sampling session ${session.id}`, 409);
      return promise(existing.requestId);
    }

    const requestId = this.futures.create();
    if (key) {
      // Retries come within minutes, and a request's result is kept FUTURE_RETAIN_MS: its dedupe entry lives as
      // long (insertion order is time order), so a long run holds only the last minutes' (20,000 at most).
      const now = Date.now();
      for (const [k, r] of this.sampleRequests) {
        if (now - r.at <= FUTURE_RETAIN_MS && this.sampleRequests.size < 20_000) break;
        this.sampleRequests.delete(k);
      }
      this.sampleRequests.set(key, { requestId, fingerprint, at: now });
    }
    const s = session;
    void this.futures.run(requestId, async () => {
      await new Promise((r) => setImmediate(r));
      const weights = await this.samplers.weightsOf(s);
      const sequences = weights.sample(prompt, params, numSamples);
      return {
        kind: 'sample',
        result: {
          sequences: sequences.map((q) => ({ tokens: q.tokens, logprobs: q.logprobs, stopReason: q.stopReason })),
          promptLogprobs: wantPromptLogprobs ? weights.promptLogprobs(prompt) : null,
        },
      };
    });
    return promise(requestId);
  }

  // ---- helpers ----

  private run(modelId: string): TrainingRun {
    const run = this.runs.get(modelId);
    if (!run) throw new RequestError(`unknown model_id ${quote(modelId)} (models do not survive a trainer restart: create a model and load_weights a saved tinker:// path)`, 404);
    run.lastRequestTime = new Date().toISOString();
    return run;
  }

  /**
   * Queues a training request at its seq_id. `prepare` validates the request; when it throws, the seq_id is
   * still taken (as a failed no-op) so the model's later requests are not held up waiting for it.
   */
  private enqueue(run: TrainingRun, seqId: number | undefined, prepare: () => (model: TrainableModel) => Promise<FuturePayload>) {
    const requestId = this.futures.create();
    let work: ((model: TrainableModel) => Promise<FuturePayload>) | undefined;
    let invalid: unknown;
    try {
      work = prepare();
    } catch (err) {
      invalid = err;
    }
    const existing = run.queue.submit(
      seqId,
      requestId,
      () => this.futures.run(requestId, async () => {
        if (!work) throw invalid;
        return work(await run.model);
      }),
      (message) => this.futures.settle(requestId, errorPayload(new RequestError(message), this.disk)),
    );
    if (existing) return { request_id: existing, model_id: run.info.modelId };
    if (invalid) throw invalid;
    return { request_id: requestId, model_id: run.info.modelId };
  }

}

function sequenceIds(requestId: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${requestId}:${i}`);
}

/**
 * With AGL_TRAINER_RECORD_FWDBWD=<file>, every forward_backward request the trainer accepts is appended to that
 * file as it was received (one JSON line: model id, loss, datums in wire form, image chunks included), so tests
 * can check what a train step sent from the receiving end, not from the sender's bookkeeping.
 */
function recordReceived(modelId: string, r: ForwardBackwardRequest): void {
  const file = process.env.AGL_TRAINER_RECORD_FWDBWD;
  if (!file) return;
  appendFileSync(file, JSON.stringify({ model_id: modelId, loss_fn: r.lossFn, forward_only: r.forwardOnly, data: r.data.map(datumToJson) }) + '\n');
}
