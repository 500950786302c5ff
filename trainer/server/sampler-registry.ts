// Sampling sessions and their frozen weights. Sessions backed by a checkpoint path or a base model can drop
// their weights and reload them; ephemeral snapshots (save_weights_for_sampler without a path) live only in
// memory. At most `maxLoaded` weight sets stay loaded, least recently used dropped first.
import type { Engine, FrozenWeights } from '../engine';
import { parseTinkerPath, type CheckpointStore, type TinkerPath } from './checkpoints';
import { RequestError } from './futures';

export interface SamplingSession {
  id: string;
  baseModel: string;
  modelPath?: string;
  /** Loaded weights; path- and base-backed sessions may drop them and reload, ephemeral ones cannot. */
  weights?: Promise<FrozenWeights>;
  /** An in-memory snapshot: nothing to reload its weights from. */
  ephemeral?: true;
}

export class SamplerRegistry {
  private readonly sessions = new Map<string, SamplingSession>();
  /** The sessions holding weights, least recently used first (Map order): eviction looks only at these, not at
   *  every session of the last hour. */
  private readonly loaded = new Map<string, SamplingSession>();

  constructor(
    private readonly engine: Engine,
    private readonly checkpoints: CheckpointStore,
    private readonly maxLoaded: number,
  ) {}

  get(id: string): SamplingSession | undefined {
    return this.sessions.get(id);
  }

  delete(id: string): void {
    this.sessions.delete(id);
    this.loaded.delete(id);
  }

  /** A session on a saved checkpoint (sampler or training weights) or on a base model; nothing loads yet. A plain
   *  record, no loader closure: a long run keeps one per step for the hour its sampler lives. */
  lazy(id: string, modelPath: string | undefined, baseModel: string | undefined): SamplingSession {
    return modelPath === undefined ? { id, baseModel: baseModel ?? '' } : { id, baseModel: baseModel ?? '', modelPath };
  }

  /** Registers an in-memory snapshot. */
  addEphemeral(id: string, baseModel: string, frozen: FrozenWeights): void {
    void this.weightsOf({ id, baseModel, weights: Promise.resolve(frozen), ephemeral: true });
  }

  /** Forgets the sessions backed by a checkpoint that is gone (expired or deleted): they could not load again. */
  forgetPaths(paths: ReadonlySet<string>): string[] {
    const gone: string[] = [];
    for (const [id, s] of this.sessions) {
      if (s.modelPath === undefined || !paths.has(s.modelPath)) continue;
      this.delete(id);
      gone.push(id);
    }
    return gone;
  }

  /** Drops the in-memory snapshots whose ids start with `prefix` (an expired session's). */
  dropEphemeral(prefix: string): void {
    for (const [id, s] of this.sessions) if (id.startsWith(prefix) && s.ephemeral) this.delete(id);
  }

  /** Registers the session and returns its weights, loading them if needed. */
  weightsOf(session: SamplingSession): Promise<FrozenWeights> {
    this.sessions.set(session.id, session);
    if (!session.weights) {
      const loading = this.load(session);
      loading.catch(() => {
        if (session.weights === loading) session.weights = undefined; // try again next time
      });
      session.weights = loading;
    }
    const weights = session.weights;
    this.loaded.delete(session.id); // re-insert: Map order is the LRU order
    this.loaded.set(session.id, session);
    for (const [id, old] of this.loaded) {
      if (this.loaded.size <= this.maxLoaded) break;
      this.loaded.delete(id);
      if (old.ephemeral) this.sessions.delete(id);
      else old.weights = undefined;
    }
    return weights;
  }

  /** Re-registers the sampling sessions of an earlier life that were backed by a path or a base model. */
  async restore(): Promise<void> {
    for (const rec of await this.checkpoints.readSamplingSessions()) {
      const id = rec.sampling_session_id;
      if (typeof id !== 'string' || this.sessions.has(id)) continue;
      const modelPath = typeof rec.model_path === 'string' ? rec.model_path : undefined;
      const baseModel = typeof rec.base_model === 'string' ? rec.base_model : undefined;
      this.sessions.set(id, this.lazy(id, modelPath, baseModel));
    }
  }

  private load(session: SamplingSession): Promise<FrozenWeights> {
    if (session.ephemeral) return Promise.reject(new RequestError(`sampling session ${session.id} lost its in-memory weights`, 404));
    return session.modelPath === undefined ? this.engine.baseWeights(session.baseModel) : this.loadFrozenFrom(parseTinkerPath(session.modelPath));
  }

  private async loadFrozenFrom(p: TinkerPath): Promise<FrozenWeights> {
    const dir = await this.checkpoints.requireIntact(p);
    if (p.kind === 'sampler_weights') return this.engine.loadFrozen(dir);
    // A training checkpoint: load it into a scratch model and freeze that.
    const run = await this.checkpoints.readRun(p.modelId);
    if (!run) throw new RequestError(`no run metadata for ${p.modelId}`, 404);
    const model = await this.engine.createModel(run.baseModel, { loraRank: run.loraRank, seed: run.seed });
    await model.loadState(dir, false);
    return model.snapshot();
  }
}
