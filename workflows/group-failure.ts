// How a group whose rollouts failed ends the async loop. A group's activity failing (not cancelled: a stop or
// continue-as-new cancels groups on purpose) is remembered here, and the loop's wait for groups rejects with it; a
// failure that comes while the loop trains, publishes or logs ends the run before its next step starts.
//
// The wait is a condition Temporal evaluates after each activation's jobs, with the failure in it: the loop learns of
// a failure at the same point in the activation as of a group's result, so the commands that follow (cancelling the
// groups still sampling) come in the same order as when the loop polled a flag. A Promise.race against a rejected
// promise would reject in the middle of the activation's microtasks instead, and could reorder them.
import { condition, isCancellation } from '@temporalio/workflow';

export class GroupFailure {
  private first: { error: unknown } | undefined;

  /** A group's activity failed: the first failure is the one the run ends with. Cancellations are not failures. */
  record(err: unknown): void {
    if (!isCancellation(err)) this.first ??= { error: err };
  }

  /** Throws the first failure, if a group failed. */
  throwIfFailed(): void {
    if (this.first) throw this.first.error;
  }

  /** Resolves once `ready` holds; rejects with the first failure once a group has failed. */
  async until(ready: () => boolean): Promise<void> {
    await condition(() => ready() || this.first !== undefined);
    this.throwIfFailed();
  }
}
