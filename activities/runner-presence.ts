// Whether any runner could take a run's rollouts: runners say which agent they run (their worker telemetry's
// `agent`, none for runners that name none, as Agent-lightning 0.3's), and take only rollouts routed to it. A run
// whose agent no runner has served lately waits for ever without a word; the collect activities put this reason in
// their heartbeat details, which `status` shows.
import type { StoreClient } from '../store/client';
import type { Worker } from '../store/types';

export const RECENT_SECONDS = 30;

/** The agent a worker said it runs (null: none named). */
export function workerAgent(w: Pick<Worker, 'heartbeat_stats'>): string | null {
  const agent = (w.heartbeat_stats as Record<string, unknown> | null | undefined)?.agent;
  return typeof agent === 'string' && agent ? agent : null;
}

/** Why no runner can take rollouts routed to `route` (null = some runner of it was seen lately). */
export function unservedReason(workers: Worker[], route: string | null, nowSec: number): string | null {
  const recent = workers.filter((w) => nowSec - Math.max(w.last_heartbeat_time ?? 0, w.last_dequeue_time ?? 0, w.last_idle_time ?? 0, w.last_busy_time ?? 0) < RECENT_SECONDS);
  if (recent.some((w) => workerAgent(w) === route)) return null;
  const others = [...new Set(recent.map((w) => workerAgent(w) ?? '(none)'))];
  const wanted = route === null ? 'runners that name no agent' : `runners of agent "${route}"`;
  return `no runner can take these rollouts: the run wants ${wanted}; runners seen in the last ${RECENT_SECONDS} s: ${others.length ? `of agent ${others.join(', ')}` : 'none'}`;
}

/**
 * The same, asking the store: null when some runner serves the route, or when the store did not answer (the call cut
 * short by `signal` silently; any other failure told to `onError`, the caller's log, with the reason).
 */
export async function unservedNow(store: StoreClient, route: string | null, signal?: AbortSignal, onError: (msg: string) => void = () => {}): Promise<string | null> {
  try {
    const page = await store.queryWorkers({ limit: 1000 }, { timeoutMs: 10_000, signal });
    return unservedReason(page.items, route, Date.now() / 1000);
  } catch (err) {
    if (!signal?.aborted) onError(`could not ask the store which runners are polling: ${(err as Error)?.message ?? String(err)}`);
    return null;
  }
}
