// Heartbeats while an activity waits on one long remote call (a base model being built, a big train step), so
// Temporal can tell a slow activity from a dead worker without a long heartbeat timeout.
import { heartbeat } from '@temporalio/activity';

export async function withHeartbeats<T>(details: unknown, work: Promise<T>, everyMs = 5_000): Promise<T> {
  heartbeat(details);
  const timer = setInterval(() => heartbeat(details), everyMs);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}
