// The REST side of checkpoints on the local trainer: weights_info, training_runs/{id}, its checkpoint list (with
// expiry), DELETE, and PUT …/ttl (1 hour to 10 years, or null = kept), as SDK 0.38's RestClient calls them.
import { quote } from '../../common/front-door';
import { RequestError } from './futures';
import { formatTinkerPath, parseTinkerPath, type CheckpointStore, type RunInfo } from './checkpoints';
import { trainerNow } from './clock';
import { asBody, reqString, type Body } from './validate';

const MIN_TTL_S = 3600;
const MAX_TTL_S = 10 * 365 * 24 * 3600;

/** ttl_seconds of a save or a PUT …/ttl: 1 hour to 10 years, or null / absent (kept). */
export function ttlOf(b: Body): number | null {
  const v = b.ttl_seconds;
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < MIN_TTL_S || v > MAX_TTL_S) {
    throw new RequestError(`ttl_seconds must be a whole number from ${MIN_TTL_S} (1 hour) to ${MAX_TTL_S} (10 years), or null; got ${quote(v)}`);
  }
  return v;
}

/** checkpoint.json fields for a TTL counted from now. */
export const expiry = (ttl: number | null) => (ttl === null ? {} : { expires_at: new Date(trainerNow() + ttl * 1000).toISOString() });

export class CheckpointRest {
  constructor(
    private readonly checkpoints: CheckpointStore,
    private readonly live: (modelId: string) => { info: RunInfo; lastRequestTime: string } | undefined,
  ) {}

  async weightsInfo(b: Body) {
    const p = parseTinkerPath(reqString(b, 'tinker_path'));
    this.checkpoints.requireExisting(p);
    const run = await this.checkpoints.readRun(p.modelId);
    if (!run) throw new RequestError(`no run metadata for ${p.modelId}`, 404);
    const meta = await this.checkpoints.readMeta(p);
    return {
      base_model: run.baseModel,
      is_lora: true,
      lora_rank: run.loraRank,
      train_unembed: true,
      train_mlp: true,
      train_attn: true,
      // Extension: sha256 of the saved training weights (determinism and crash tests compare these).
      ...(typeof meta.weights_sha256 === 'string' ? { weights_sha256: meta.weights_sha256 } : {}),
    };
  }

  async trainingRun(modelId: string) {
    const live = this.live(modelId);
    const info = live?.info ?? (await this.checkpoints.readRun(modelId));
    if (!info) throw new RequestError(`unknown training run ${quote(modelId)}`, 404);
    return {
      training_run_id: info.modelId,
      base_model: info.baseModel,
      model_owner: 'local',
      is_lora: true,
      corrupted: false,
      lora_rank: info.loraRank,
      last_request_time: live?.lastRequestTime ?? info.createdAt,
      user_metadata: {},
    };
  }

  async listCheckpoints(modelId: string) {
    if (!this.live(modelId) && !(await this.checkpoints.readRun(modelId))) throw new RequestError(`unknown training run ${quote(modelId)}`, 404);
    const found = await this.checkpoints.list(modelId);
    return {
      checkpoints: found.map(({ path: p, meta }) => ({
        checkpoint_id: `${p.kind}/${p.name}`,
        checkpoint_type: p.kind === 'weights' ? 'training' : 'sampler',
        time: typeof meta.time === 'string' ? meta.time : new Date(0).toISOString(),
        tinker_path: formatTinkerPath(p),
        public: false,
        expires_at: typeof meta.expires_at === 'string' ? meta.expires_at : null,
      })),
      cursor: { offset: 0, limit: found.length, total_count: found.length },
    };
  }

  async deleteCheckpoint(modelId: string, checkpointId: string) {
    const [kind, name] = checkpointId.split('/');
    const p = parseTinkerPath(`tinker://${modelId}/${kind}/${name}`);
    await this.checkpoints.remove(p);
    return {};
  }

  async setCheckpointTtl(modelId: string, checkpointId: string, b: Body) {
    const [kind, name] = checkpointId.split('/');
    const p = parseTinkerPath(`tinker://${modelId}/${kind}/${name}`);
    const ttl = ttlOf(asBody(b));
    if (!('ttl_seconds' in b)) throw new RequestError('ttl_seconds is required (a number of seconds, or null to keep the checkpoint)');
    this.checkpoints.requireExisting(p);
    await this.checkpoints.setTtl(p, ttl);
    return {};
  }

}
