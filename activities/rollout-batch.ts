// Runs a set of rollouts through the store the way the seed's do_group_of_group_rollouts does, but durably:
// each rollout is enqueued with an idempotency key under one prefix, so a retried activity finds the rollouts its
// earlier attempt made (one query by the prefix, batch-ref.ts; nothing per rollout is kept in heartbeats or
// history), at most `concurrency` are outstanding at once, and the wait is a long-poll (no polling loop).
import { heartbeat, Context } from '@temporalio/activity';
import { createHash } from 'node:crypto';
import type { StoreClient } from '../store/client';
import type { Json, Rollout, RolloutStatus } from '../store/types';
import { TERMINAL_ROLLOUT_STATUSES } from '../store/types';
import type { CollectedBatch, CollectedGroup, RunSettings } from '../shared/run-types';
import { faultPoint } from '../common/fault-points';
import { launchMetadata } from '../gateway/launch';
import { withHeartbeats } from './keep-alive';
import { rolloutsByKeyPrefix } from './batch-ref';
import { rolloutRoute } from '../config/agent-workflow';
import { serveAgentWorkflows } from './agent-workflows';
import { unservedNow } from './runner-presence';
import { ATTEMPT_ERROR, failureReasonOf, RolloutFailures } from './rollout-failures';

export interface RolloutRequest {
  /** Unique within the run: run/phase/batch/group/member. */
  key: string;
  /**
   * What the rollout's sampling seed is derived from: the config's seed and phase/batch/group/member, not the
   * run's name, so two runs with the same config (a fault-free one and a crashed-and-resumed one) sample the
   * same tokens.
   */
  seedKey: string;
  group: number;
  task: unknown;
  metadata: Record<string, Json>;
}

/** Heartbeat details: how far the batch is (shown in the UI; a retry finds its rollouts in the store). */
interface Progress {
  done: number;
  of: number;
  /** Why the rollouts may wait for ever: no runner of the run's agent is polling (runner-presence.ts). */
  waiting?: string;
}

/** The prefix of this run's idempotency keys (see RunSettings.instanceId). */
export function runKey(settings: RunSettings): string {
  return settings.instanceId ? `${settings.runName}@${settings.instanceId}` : settings.runName;
}

/** A seed for everything random about one rollout, from what it is rather than when it ran (same on retries). */
export function rolloutSeed(key: string): number {
  return createHash('sha256').update(key).digest().readUInt32BE(0) & 0x7fffffff;
}

/**
 * Runs `requests` (every key starts with `keyPrefix`, and no other rollout's does) and returns their groups in
 * order. Rollouts already in the store under their keys (an earlier attempt's) are picked up, not made again.
 */
export async function runRolloutBatch(
  store: StoreClient,
  settings: RunSettings,
  mode: 'train' | 'val',
  resourcesId: string,
  keyPrefix: string,
  requests: RolloutRequest[],
  numGroups: number,
  log: (msg: string) => void,
): Promise<Required<Pick<CollectedBatch, 'groups' | 'counts'>>> {
  const signal = Context.current().cancellationSignal;
  const finished = new Map<string, Rollout>();
  const earlier = await rolloutsByKeyPrefix(store, keyPrefix, signal);
  const ids = requests.map((r) => {
    if (!r.key.startsWith(keyPrefix)) throw new Error(`rollout key ${r.key} does not start with ${keyPrefix}`);
    const found = earlier.get(r.key);
    if (found && TERMINAL_ROLLOUT_STATUSES.includes(found.status)) finished.set(found.rollout_id, found);
    return found?.rollout_id ?? '';
  });

  const enqueue = async (i: number) => {
    const r = requests[i]!;
    const rollout = await store.enqueueRollout(r.task as Json, {
      mode,
      resourcesId,
      idempotencyKey: r.key,
      // With aglController set, Agent-lightning 1.0 agents serve it (the store's 1.0 gateway lists it to agl-controller).
      metadata: { ...r.metadata, agl_key: r.key, sampling_seed: rolloutSeed(r.seedKey), ...launchMetadata(settings.aglController), ...routeMetadata(settings) },
      config: {
        timeout_seconds: settings.rolloutTimeoutSeconds,
        // Without it an attempt whose runner died stays `running` until timeout_seconds (the runner heartbeats).
        unresponsive_seconds: settings.rolloutUnresponsiveSeconds,
        max_attempts: settings.rolloutMaxAttempts,
        // The store retries nothing unless told which attempt endings to retry (its default is none).
        retry_condition: ['failed', 'timeout', 'unresponsive'],
      },
      timeoutMs: 30_000,
      signal,
    });
    ids[i] = rollout.rollout_id;
  };

  // Rollouts an earlier attempt enqueued are outstanding again; new ones fill up to `concurrency`.
  let next = 0;
  const outstanding = () => ids.filter((id) => id !== '' && !finished.has(id)).length;
  while (next < requests.length && ids[next] !== '') next++;
  const fill = async () => {
    while (next < requests.length && outstanding() < settings.concurrency) {
      if (ids[next] === '') await enqueue(next);
      next++;
    }
  };
  await fill();
  faultPoint('rollouts.waiting', { run: settings.runName, batch: Number(requests[0]?.metadata.batch ?? -1) });

  // An agent workflow serves each rollout (run config agentWorkflow): this activity starts them itself.
  const agentWorkflow = settings.agentWorkflow;
  const served = agentWorkflow ? serveAgentWorkflows({ store, settings: { ...settings, agentWorkflow }, keyPrefix, signal, log }) : null;
  // Runs served by runners: say so when none that could take their rollouts is polling (shown by `status`).
  const checksRunners = !agentWorkflow && !settings.aglController;
  let waitingFor: string | null = null;
  let lastCheck = Date.now();
  // Rollouts failing again and again: said in status, and past the limit the batch (and so the run) ends.
  const failures = new RolloutFailures(settings.stopAfterFailedRollouts ?? requests.length, mode === 'val' ? 'evaluation' : 'training');
  const ended = async (r: Rollout) => {
    let reason = failureReasonOf(r);
    if (r.status === 'failed' && !reason) {
      // The failure counts either way; only its reason is missing when the store cannot say it now.
      const attempt = await store.getLatestAttempt(r.rollout_id, { timeoutMs: 30_000, signal }).catch((err: Error) => {
        log(`rollout ${r.rollout_id} failed; its attempt's reason could not be read: ${err.message}`);
        return null;
      });
      const m = attempt?.metadata?.[ATTEMPT_ERROR];
      reason = typeof m === 'string' && m ? m : null;
    }
    failures.observe(r.status, reason);
  };
  let lastNote: string | null = null;
  try {
    let lastLog = 0;
    while (finished.size < requests.length) {
      const waiting = ids.filter((id) => id !== '' && !finished.has(id));
      if (waiting.length === 0) {
        await fill();
        continue;
      }
      // Long-poll: the store answers as soon as any of them finishes, or after the timeout.
      // Heartbeat during the wait too, so a short heartbeat timeout (a dead worker noticed quickly) is safe.
      if (checksRunners && Date.now() - lastCheck > 10_000) {
        lastCheck = Date.now();
        const before: string | null = waitingFor;
        waitingFor = await unservedNow(store, rolloutRoute(settings), signal, (m) => log(`run ${settings.runName}: ${m}`));
        if (waitingFor && waitingFor !== before) log(waitingFor);
      }
      if (served) waitingFor = served.waiting();
      const why = () => waitingFor ?? failures.note();
      const progress: Progress = { done: finished.size, of: requests.length, ...(why() ? { waiting: why()! } : {}) };
      const answered = await withHeartbeats(progress, store.waitForRollouts(waiting, 10, { timeoutMs: 40_000, signal }), 2_000);
      for (const r of answered) {
        if (!TERMINAL_ROLLOUT_STATUSES.includes(r.status) || finished.has(r.rollout_id)) continue;
        finished.set(r.rollout_id, r);
        await ended(r);
      }
      const note = failures.note();
      if (note && note !== lastNote) log(note);
      lastNote = note;
      failures.check();
      await fill();
      heartbeat({ done: finished.size, of: requests.length, ...(why() ? { waiting: why()! } : {}) } satisfies Progress);
      if (Date.now() - lastLog > 15_000) {
        lastLog = Date.now();
        log(`${mode} rollouts: ${finished.size}/${requests.length} finished`);
      }
    }
  } finally {
    await served?.stop();
  }

  const groups: CollectedGroup[] = Array.from({ length: numGroups }, () => ({ taskIndex: -1, rolloutIds: [], statuses: [] }));
  const counts = { succeeded: 0, failed: 0, cancelled: 0, other: 0 };
  requests.forEach((r, i) => {
    const rollout = finished.get(ids[i]!)!;
    const g = groups[r.group]!;
    g.taskIndex = Number(r.metadata.task_index ?? -1);
    g.rolloutIds.push(rollout.rollout_id);
    g.statuses.push(rollout.status);
    const s = rollout.status as RolloutStatus;
    if (s === 'succeeded' || s === 'failed' || s === 'cancelled') counts[s]++;
    else counts.other++;
  });
  return { groups, counts };
}

/** Routes a run's rollouts to the agent it names (only runners naming it take them), or to its agent workflow. */
function routeMetadata(settings: RunSettings): Record<string, Json> {
  const route = rolloutRoute(settings);
  // The run's share of a shared fleet and its cap in flight, read by the store's dequeue (store/run-policy/fair-share.ts).
  const weight = settings.fleetWeight ?? 1;
  const cap = settings.maxRolloutsInFlight ?? null;
  return { ...(route ? { agl_agent: route } : {}), ...(weight !== 1 ? { agl_fleet_weight: weight } : {}), ...(cap !== null ? { agl_max_in_flight: cap } : {}) };
}
