// `stop` ends a run whatever it waits on. A stop lets the batch in flight finish and save, as before; but a run
// can wait for ever (an activity retried on a trainer that never comes back, rollouts no runner takes, a full
// disk), and then the stop would hang with it. So the stop gives the batch in flight a grace period; once it is
// over, everything the run waits on is cancelled (it runs inside this scope) and the run ends with what it has:
// the last trained policy as its final checkpoint, when that can still be recorded within a minute. A run still
// starting (validating, creating its model) has nothing to finish and is cut at once.
// New in workflow code, so guarded by patched(): histories of stops made before it replay unchanged.
import { CancellationScope, condition, isCancellation, log, patched } from '@temporalio/workflow';

export const STOP_ENDS_ANY_WAIT = 'stop-ends-any-wait';
/** How long a stop waits for the batch in flight before cutting it short (the stop update can say otherwise). */
export const DEFAULT_STOP_GRACE_SECONDS = 300;

export class StopGrace {
  private scope: CancellationScope | undefined;
  /** True once a stop cancelled what the run was waiting on. */
  cut = false;

  /** Runs the run's work so that a stop can cut it; resolves to undefined when it was cut. */
  async run<T>(work: () => Promise<T>): Promise<T | undefined> {
    this.scope = new CancellationScope();
    try {
      return await this.scope.run(work);
    } catch (err) {
      if (this.cut && isCancellation(err)) return undefined;
      throw err;
    }
  }

  /** Called by the stop handler: waits out the grace (none while starting), then cuts what is still running. */
  async stopRequested(graceSeconds: number, starting: boolean, ended: () => boolean): Promise<void> {
    if (!patched(STOP_ENDS_ANY_WAIT)) return;
    if (!starting && (await condition(ended, `${Math.max(1, graceSeconds)} seconds`))) return;
    if (ended() || this.cut) return;
    log.warn('stop: cutting short what the run waits on', { graceSeconds, starting });
    this.cut = true;
    this.scope?.cancel();
  }
}
