// The workflow's three kinds of activity stub (timeouts and retries per kind).
import { proxyActivities } from '@temporalio/workflow';
import type { TrainingActivities } from '../activities/types';

// Quick bookkeeping: retried until it works, each attempt short.
const BOOKKEEPING = {
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
} as const;
// Talks to the trainer (model creation, loading a checkpoint): may wait on a busy service.
const TRAINER = {
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
} as const;
// Rollouts wait on agents; they heartbeat progress and resume from it on retry.
const ROLLOUTS = {
  startToCloseTimeout: '4 hours',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
} as const;

export type ActivityStubs = ReturnType<typeof activityStubs>;

/**
 * The three kinds of activity stub. A worker that dies mid-activity is only noticed when its heartbeat times out,
 * so `activityHeartbeatTimeoutSeconds` (when set) shortens that wait for every kind; all our activities heartbeat
 * well within 5 s while they work.
 */
export function activityStubs(heartbeatSeconds: number | null | undefined, fairness?: { key: string; weight: number }) {
  const hb = heartbeatSeconds ? { heartbeatTimeout: `${heartbeatSeconds} seconds` as const } : {};
  // Temporal's task-queue fairness: a run's activities share the workers with other runs' by its fleetWeight
  // (used where the server has fairness enabled; ignored otherwise). Keys are at most 64 bytes.
  const prio = fairness ? { priority: { fairnessKey: fairness.key.slice(0, 64), fairnessWeight: fairness.weight } } : {};
  return {
    bookkeeping: proxyActivities<TrainingActivities>({ ...BOOKKEEPING, ...hb, ...prio }),
    trainer: proxyActivities<TrainingActivities>({ ...TRAINER, ...hb, ...prio }),
    rollouts: proxyActivities<TrainingActivities>({ ...ROLLOUTS, ...hb, ...prio }),
  };
}
