// Rollouts that keep failing, said where an operator looks and ended before they hide the cause for ever. A batch's
// collect (rollout-batch.ts) tells this watch every rollout that ends; failed ones carry the reason their attempt
// was ended with (an agent workflow's failure, written by agent-workflows.ts under ATTEMPT_ERROR). After a few
// failures in a row with nothing succeeding, `status`, `watch` and the UI (the activity's heartbeat details, as for
// rollouts nobody serves) show the count and the agent's own error line; after `stopAfterFailedRollouts` in a row
// (default: the whole batch) the collect fails for good with that line, and with it the run: retrying cannot
// change a prompt that does not fit the model, and a run that trains on nothing must not look busy.
import { ApplicationFailure } from '@temporalio/activity';
import type { AttemptedRollout, Rollout } from '../store/types';

/** The attempt metadata key holding why the attempt failed (one line). */
export const ATTEMPT_ERROR = 'agl_error';

/** Failures in a row before status says so (fewer than this can be bad luck). */
const SAY_AFTER = 3;

/** The deepest cause's message of an error chain (a workflow failure wraps the activity's, which wraps the agent's), on one line. */
export function failureLine(err: unknown): string {
  let e = err as { message?: unknown; cause?: unknown } | null;
  let message = '';
  for (let depth = 0; e && depth < 10; depth++) {
    if (typeof e.message === 'string' && e.message) message = e.message;
    e = (e.cause ?? null) as typeof e;
  }
  return (message || String(err)).replace(/\s+/g, ' ').trim().slice(0, 300);
}

/** Why a finished rollout failed, from its latest attempt's metadata; null when its attempt gave no reason. */
export function failureReasonOf(r: Rollout | AttemptedRollout): string | null {
  const reason = 'attempt' in r ? r.attempt?.metadata?.[ATTEMPT_ERROR] : undefined;
  return typeof reason === 'string' && reason ? reason : null;
}

export class RolloutFailures {
  private inARow = 0;
  private lastReason: string | null = null;
  private readonly reasons = new Map<string, number>();

  /** `limit`: failures in a row that end the batch (0: never). */
  constructor(private readonly limit: number, private readonly what: string) {}

  /** One rollout ended: 'failed' counts, 'succeeded' resets; others (timeouts, cancelled) leave the count as it is. */
  observe(status: string, reason: string | null): void {
    if (status === 'succeeded') {
      this.inARow = 0;
      this.reasons.clear();
      return;
    }
    if (status !== 'failed') return;
    this.inARow++;
    const r = reason ?? 'the attempt ended failed without a reason (runners: see their log)';
    this.lastReason = r;
    this.reasons.set(r, (this.reasons.get(r) ?? 0) + 1);
  }

  /** The most frequent reason of this run of failures, with how many of them it ended. */
  private commonest(): { reason: string; count: number } | null {
    let best: { reason: string; count: number } | null = null;
    for (const [reason, count] of this.reasons) if (!best || count > best.count) best = { reason, count };
    return best;
  }

  /** What status shows while rollouts keep failing (null while they do not). */
  note(): string | null {
    if (this.inARow < SAY_AFTER) return null;
    const c = this.commonest()!;
    const share = c.count === this.inARow ? 'each' : `${c.count} of them`;
    return `${this.what} rollouts keep failing: ${this.inARow} in a row, none succeeded; ${share}: ${c.reason}` +
      (this.limit > 0 ? ` (the run stops at ${this.limit}: stopAfterFailedRollouts)` : '');
  }

  /** Throws the run's end once `limit` rollouts in a row failed. */
  check(): void {
    if (this.limit <= 0 || this.inARow < this.limit) return;
    const c = this.commonest()!;
    throw ApplicationFailure.create({
      type: 'RolloutsKeepFailing',
      nonRetryable: true,
      message: `${this.inARow} ${this.what} rollouts in a row failed and none succeeded (stopAfterFailedRollouts ${this.limit}); ` +
        `${c.count === this.inARow ? 'each' : `${c.count} of them`}: ${c.reason}` + (this.lastReason !== c.reason ? `; the last: ${this.lastReason}` : ''),
    });
  }
}
