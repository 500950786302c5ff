// Whether a run's settings fit the engine that will train it: the losses each SkyRL backend implements, the LoRA
// rank it was started to allow, what its server does not serve. Pure: the settings and what the engine said about
// itself in, one line per problem out (each naming the engine, its backend and the setting), plus notes for what
// works differently but still works. What the server cannot say (its backend, its max_lora_rank) comes from the
// run config's `engine`, which `npm start -- --engine skyrl` fills in.
import type { EngineProfile } from '../tinker/engine-profile';
import type { EngineConfig } from './run-config';

export type SkyrlBackend = 'jax' | 'fsdp' | 'megatron';

/** The losses each SkyRL 0.4.0 backend trains (SkyRL's limitations.mdx; jax: skyrl.tinker.types.LOSS_TYPES). */
export const SKYRL_LOSSES: Record<SkyrlBackend, readonly string[]> = {
  jax: ['cross_entropy', 'importance_sampling', 'ppo', 'cispo'],
  fsdp: ['cross_entropy', 'importance_sampling'],
  megatron: ['cross_entropy', 'importance_sampling'],
};

/** SkyRL's JAX backend's `max_lora_rank` when its --backend-config does not set one. */
export const SKYRL_DEFAULT_MAX_LORA_RANK = 32;

export interface EngineNeeds {
  lossFn?: string;
  async?: unknown;
  loraRank: number;
  engine?: EngineConfig | null;
  checkpointTtlSeconds?: number | null;
}

export interface EngineFit {
  problems: string[];
  notes: string[];
}

const lossOf = (cfg: EngineNeeds) => cfg.lossFn ?? (cfg.async ? 'ppo' : 'importance_sampling');

export function engineFit(cfg: EngineNeeds, profile: EngineProfile, url: string): EngineFit {
  const problems: string[] = [];
  const notes: string[] = [];
  const declared = cfg.engine?.name;
  if (declared === 'skyrl' && profile.name !== 'skyrl') {
    problems.push(`engine.name: "skyrl", but the server at ${url} is not SkyRL's Tinker API (it serves no OpenAPI document titled so); check baseUrl`);
    return { problems, notes };
  }
  if (profile.name !== 'skyrl') return { problems, notes };
  const backend: SkyrlBackend = cfg.engine?.backend ?? 'jax';
  const who = `SkyRL's ${backend} backend at ${url}`;
  const loss = lossOf(cfg);
  const losses = SKYRL_LOSSES[backend];
  if (!losses.includes(loss)) problems.push(`lossFn: ${JSON.stringify(loss)} is not trained by ${who} (it trains ${losses.join(', ')})`);
  const maxRank = cfg.engine?.maxLoraRank ?? SKYRL_DEFAULT_MAX_LORA_RANK;
  if (cfg.loraRank > maxRank) {
    const source = cfg.engine?.maxLoraRank !== undefined ? 'engine.maxLoraRank' : "SkyRL's default, engine.maxLoraRank unset";
    problems.push(`loraRank: ${cfg.loraRank} is above the max_lora_rank ${maxRank} of ${who} (${source}); lower loraRank or start the engine with a larger max_lora_rank`);
  }
  if (!profile.checkpointTtl && cfg.checkpointTtlSeconds != null) {
    notes.push(`checkpointTtlSeconds: ${who} serves no checkpoint TTLs, so its checkpoints stay until deleted (retainSteps still deletes superseded steps)`);
  }
  return { problems, notes };
}
