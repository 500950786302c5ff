// The watchdog rule of §3.7 as a pure function: which running attempts have timed out or gone silent.
import type { Attempt, AttemptStatus, RolloutConfig } from './types';

export interface RunningRollout {
  rollout_id: string;
  config: RolloutConfig;
  attempt: Attempt;
}

/**
 * `servingSince`: when this store process started. Silence before it is the store's own (it was down, so no
 * heartbeat could land), not the runner's: a short store restart must not retire every live attempt.
 */
export function unhealthyStatus(r: RunningRollout, now: number, servingSince = -Infinity): AttemptStatus | null {
  const { timeout_seconds: timeout, unresponsive_seconds: silence } = r.config;
  const a = r.attempt;
  if (a.status !== 'preparing' && a.status !== 'running') return null;
  if (timeout !== null && timeout !== undefined && now - a.start_time > timeout) return 'timeout';
  if (silence !== null && silence !== undefined) {
    const since = Math.max(a.last_heartbeat_time ?? a.start_time, servingSince);
    if (now - since > silence) return 'unresponsive';
  }
  return null;
}

export function findUnhealthy(rollouts: RunningRollout[], now: number, servingSince = -Infinity): { rollout_id: string; attempt_id: string; status: AttemptStatus }[] {
  const out: { rollout_id: string; attempt_id: string; status: AttemptStatus }[] = [];
  for (const r of rollouts) {
    const status = unhealthyStatus(r, now, servingSince);
    if (status) out.push({ rollout_id: r.rollout_id, attempt_id: r.attempt.attempt_id, status });
  }
  return out;
}

/** Rollout status implied by its latest attempt's status (`rollout_status_from_attempt`, §3.3). */
export function rolloutStatusFromAttempt(status: AttemptStatus, attemptSequence: number, config: RolloutConfig) {
  if (status === 'preparing' || status === 'running' || status === 'succeeded') return status;
  const retry = config.retry_condition.includes(status) && attemptSequence < config.max_attempts;
  return retry ? ('requeuing' as const) : ('failed' as const);
}
