// Wire types of Agent-lightning 1.0's gateway API (agentlightning 1.0.2, `agentlightning/schemas.py`) and how
// its rollouts are kept in the store: which metadata marks a store rollout as one 1.0 agents serve.
import type { Json, JsonObject } from '../store/types';

export type State = 'queuing' | 'running' | 'succeeded' | 'failed';
export const STATES: readonly State[] = ['queuing', 'running', 'succeeded', 'failed'];
export const TERMINAL_STATES: readonly State[] = ['succeeded', 'failed'];

/** Upstream's VALID_TRANSITIONS: terminal states are final. */
export const VALID_TRANSITIONS: Record<State, readonly State[]> = {
  queuing: ['running', 'failed'],
  running: ['succeeded', 'failed'],
  succeeded: [],
  failed: [],
};

/** Every 1.0 rollout has one attempt, and the controllers name it "0". */
export const DEFAULT_ATTEMPT_ID = '0';

/** Upstream's RolloutConfig default. */
export const DEFAULT_TIMEOUT_SECONDS = 3600;

/**
 * The store times an attempt out this much later than the controller is told to, so a controller kills a hung
 * agent (and frees its slot) before the store gives up on the attempt; the store's timeout is the backstop for a
 * controller that went away.
 */
export const CONTROLLER_MARGIN_SECONDS = 30;

export interface LaunchConfig {
  local: { agent_class: string | null; env_map: Record<string, string> } | null;
  k8s: { job_template: string | null } | null;
}

/** The 1.0 `RolloutConfig`. */
export interface RolloutConfig1 extends LaunchConfig {
  timeout_seconds: number;
}

/**
 * Store rollout metadata key that makes a rollout visible to the 1.0 API. `rollout_id` is set for rollouts made
 * through `POST /api/rollouts` (the caller's id); a run's rollouts have none and are named by their store id.
 */
export const AGL1_KEY = 'agl1';
export interface Agl1Meta {
  rollout_id?: string;
  config: LaunchConfig & { timeout_seconds?: number };
}

/** Idempotency key in the store of a rollout made through `POST /api/rollouts`. */
export const idempotencyKeyOf = (v1Id: string): string => `agl1/${v1Id}`;

export interface Status1 {
  state: State;
  k8s_job_name: string | null;
  last_attempt_id: string | null;
  error_message: string | null;
  version: number;
  created_at: number;
  updated_at: number;
}

export interface Rollout1 {
  rollout_id: string;
  input: Json;
  is_train: boolean;
  config: RolloutConfig1;
  metadata: JsonObject;
  status: Status1;
}

export interface Event1 {
  event_type: string;
  rollout_id: string;
  attempt_id: string;
  timestamp: number;
  data: JsonObject;
}

export interface Model1 {
  model: string;
  endpoint: string;
  version: number;
}

export interface PauseState {
  paused: boolean;
  retry_after_seconds: number;
  reason: string | null;
  inflight: number;
}
