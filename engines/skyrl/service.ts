// How SkyRL's Tinker-API server is started as a supervised service (dev/supervisor.ts's ServiceSpec): `uv run -m
// skyrl.tinker.api` in the provisioned project. The API server re-spawns its engine as `uv run ... -m
// skyrl.tinker.engine` (from its parent's command line, hence `uv run` and uv on PATH), in the same process group:
// the supervisor kills the group, so a kill -9 takes the engine with it, and its database and checkpoints live under
// <data>/engines/skyrl-state/, so a restarted server finds the models and checkpoints of the one before.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { StartOptions } from '../../common/processes';
import type { SkyrlBackend, SkyrlProject } from './provision';

export interface SkyrlServiceOptions {
  project: SkyrlProject;
  /** The base model's name (a registry name such as Qwen/Qwen3-8B, or a local directory). */
  model: string;
  /** Weights (and tokenizer) to serve under `model`'s name, without the hub. */
  checkpointPath?: string;
  backend: SkyrlBackend;
  /** jax on NVIDIA GPUs (the project synced with its `gpu` extra): jax picks the GPU instead of being told CPU. */
  gpu?: boolean;
  port: number;
  host?: string;
  dataDir: string;
  /** jax only (the other backends take the rank each client asks for). */
  maxLoraRank: number;
  /** jax only: SkyRL admits one live LoRA model fewer than this (a slot is reserved). */
  maxLoraAdapters: number;
  env?: NodeJS.ProcessEnv;
  echo?: boolean;
}

/** What dev/supervisor.ts's ServiceSpec takes (typed here from common/: engines/ sits below dev/). */
export interface SkyrlServiceSpec extends StartOptions {
  healthUrl: string;
  url: string;
}

export const skyrlStatePaths = (dataDir: string) => {
  const dir = path.join(dataDir, 'engines', 'skyrl-state');
  return { dir, db: path.join(dir, 'tinker.db'), checkpoints: path.join(dir, 'checkpoints') };
};

/**
 * Ready when the engine says it is polling for requests ("Starting background engine..."), 20-40 s after start on
 * 2 cores: the API answers /healthz within ~7 s, but a request sent before the engine is up waits in the database.
 * Its liveness is asked at /api/v1/healthz (the ready line carries no URL).
 */
export const SKYRL_READY = /Starting background engine\.\.\./;

export function skyrlService(o: SkyrlServiceOptions): SkyrlServiceSpec {
  const host = o.host ?? '127.0.0.1';
  const url = `http://${host}:${o.port}`;
  const state = skyrlStatePaths(o.dataDir);
  const base = o.env ?? process.env;
  const env: NodeJS.ProcessEnv = {
    ...base,
    // The API re-spawns its engine with a bare `uv run`.
    PATH: [path.dirname(o.project.uv), base.PATH ?? ''].filter(Boolean).join(path.delimiter),
    // Never re-lock at start (that needs the network); run exactly what provisioning synced.
    UV_FROZEN: '1',
    VIRTUAL_ENV: '',
    // SkyRL logs through rich, which wraps at 80 columns without a terminal and pads every line to the width: wide
    // enough for most records on one line (the ready line included), not so wide that padding fills the log.
    COLUMNS: '200',
    // The PyPI jax is CPU-only; say so rather than let jax probe for accelerators.
    ...(o.backend === 'jax' && !o.gpu && !base.JAX_PLATFORMS ? { JAX_PLATFORMS: 'cpu' } : {}),
    // Local weights need no hub; a hub name without them does.
    ...(o.checkpointPath ? { HF_HUB_OFFLINE: '1' } : {}),
  };
  // jax's config (it forbids unknown keys): its LoRA slots, and on CPU eager mode (no JIT compile per sequence
  // length, which costs more than it saves on a tiny model on 2 cores; on a GPU the compiles pay). fsdp and megatron
  // take SkyRL-Train's dotted overrides instead and the rank each client asks for: nothing set here. Either way
  // AGL_SKYRL_BACKEND_CONFIG (a JSON object) adds to it or overrides it: placement, parallelism, nodes.
  const own = o.backend === 'jax' ? { max_lora_adapters: o.maxLoraAdapters, max_lora_rank: o.maxLoraRank, enforce_eager: !o.gpu } : {};
  const backendConfig = { ...own, ...userBackendConfig(base.AGL_SKYRL_BACKEND_CONFIG) };
  mkdirSync(state.dir, { recursive: true }); // SQLite creates the file, not its folder
  return {
    name: 'skyrl',
    command: o.project.uv,
    args: [
      // SkyRL re-spawns its engine with `uv run --extra tinker --extra <backend>` of its own; uv run syncs without
      // removing what is extra, so the gpu extra's packages synced here stay for it.
      'run', '--extra', 'tinker', '--extra', o.backend, ...(o.gpu ? ['--extra', 'gpu'] : []), '-m', 'skyrl.tinker.api',
      '--base-model', o.model,
      ...(o.checkpointPath ? ['--base-model-checkpoint-path', o.checkpointPath] : []),
      '--backend', o.backend,
      ...(Object.keys(backendConfig).length ? ['--backend-config', JSON.stringify(backendConfig)] : []),
      '--host', host,
      '--port', String(o.port),
      '--database-url', `sqlite:///${state.db}`,
      '--checkpoints-base', state.checkpoints,
      // A worker that died leaves its session's LoRA models holding adapter slots (max_lora_adapters) until the
      // session is stale: a minute without heartbeats (the client beats every 10 s), checked every 10 s.
      '--session-timeout-sec', '60',
      '--session-cleanup-interval-sec', '10',
    ],
    cwd: o.project.projectDir,
    env,
    readyLine: SKYRL_READY,
    // Loading a real model (or a first JAX compile) on a small machine takes a while.
    readyTimeoutMs: 300_000,
    echo: o.echo,
    healthUrl: `${url}/api/v1/healthz`,
    url,
  };
}

/** AGL_SKYRL_BACKEND_CONFIG: a JSON object passed on in SkyRL's --backend-config; anything else is one line. */
export function userBackendConfig(text: string | undefined): Record<string, unknown> {
  if (text === undefined || text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`AGL_SKYRL_BACKEND_CONFIG is not JSON (${(err as Error).message}): give an object such as '{"tensor_parallel_size": 2}'`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`AGL_SKYRL_BACKEND_CONFIG must be a JSON object, got ${text.slice(0, 80)}`);
  return parsed as Record<string, unknown>;
}
