// What `npm start`'s progress line adds about what the run is waiting for: the local trainer building the base
// model (its step, and an estimate of the time left), or runners (none started here, or none polling the store).
import { StoreClient } from '../store/client';
import type { Progress } from '../shared/run-types';

/** What the trainer prints while it builds a base model (trainer/model/base-models.ts). */
const STEP_LINE = /base (\S+): step (\d+)\/(\d+)/g;
const BUILT_LINE = /base (\S+) \(.*\) built in/g;

/** Before the first two step lines there is no rate to go by: what a build takes on 2 cores. */
const TYPICAL_BUILD = 'about 3 minutes on 2 cores';

interface BuildSample {
  step: number;
  atMs: number;
}

/** Follows a base-model build through the trainer's output; `line()` says how far it is, or null when none runs. */
export class BaseBuildWatch {
  private first: BuildSample | undefined;

  constructor(private readonly output: () => string) {}

  line(nowMs = Date.now()): string | null {
    const text = this.output();
    const steps = [...text.matchAll(STEP_LINE)];
    const last = steps.at(-1);
    if (!last) return null;
    const built = [...text.matchAll(BUILT_LINE)].at(-1);
    if (built && built.index! > last.index!) return null;
    const [, model, stepText, totalText] = last;
    const step = Number(stepText);
    const total = Number(totalText);
    if (!this.first || step < this.first.step) this.first = { step, atMs: nowMs };
    let left = TYPICAL_BUILD;
    if (step > this.first.step) {
      const msPerStep = (nowMs - this.first.atMs) / (step - this.first.step);
      left = `about ${Math.max(1, Math.round(((total - step) * msPerStep) / 60_000))} min left`;
    }
    return `building the base model ${model} (first start only, then cached): step ${step}/${total}, ${left}`;
  }
}

/** A runner counts as polling when the store saw it within this long. */
const RECENT_SECONDS = 30;

/** How many runners the store saw lately (dequeueing or heartbeating), or null when the store does not answer. */
export async function recentRunners(store: StoreClient, nowSec = Date.now() / 1000): Promise<number | null> {
  try {
    const page = await store.queryWorkers({}, { timeoutMs: 3_000 });
    return page.items.filter((w) => {
      const seen = Math.max(w.last_heartbeat_time ?? 0, w.last_dequeue_time ?? 0, w.last_busy_time ?? 0, w.last_idle_time ?? 0);
      return nowSec - seen < RECENT_SECONDS;
    }).length;
  } catch {
    return null;
  }
}

const WAITS_FOR_ROLLOUTS = new Set(['collecting rollouts', 'evaluating']);

/**
 * The hint `npm start` appends to the progress line, refreshed in the background (the line is drawn every
 * second; the store is asked at most every few seconds).
 */
export class StartStatus {
  private hint: string | undefined;
  private asking = false;
  private lastAskMs = 0;
  private readonly store: StoreClient;

  constructor(
    /** noRunners: the rollouts are agent workflows (no runners to wait for). */
    private readonly opts: { storeUrl: string; runnersStarted: number; build: BaseBuildWatch | null; noRunners?: boolean },
  ) {
    this.store = new StoreClient(opts.storeUrl, { timeoutMs: 3_000, retryDelaysMs: [] });
  }

  /** The hint for the progress `p` (undefined: nothing to add). */
  for(p: Progress): string | undefined {
    const building = this.opts.build?.line();
    if (building) return building;
    if (!WAITS_FOR_ROLLOUTS.has(p.phase) || p.paused || this.opts.noRunners) return undefined;
    if (!this.asking && Date.now() - this.lastAskMs > 3_000) void this.ask();
    return this.hint;
  }

  private async ask(): Promise<void> {
    this.asking = true;
    try {
      const n = await recentRunners(this.store);
      this.lastAskMs = Date.now();
      if (n === null || n > 0) this.hint = undefined;
      else if (this.opts.runnersStarted === 0) {
        this.hint = `waiting for runners: none started here (--runners 0); start yours against the store ${this.opts.storeUrl}`;
      } else {
        this.hint = `waiting for runners: none has polled the store ${this.opts.storeUrl} in ${RECENT_SECONDS} s`;
      }
    } finally {
      this.asking = false;
    }
  }
}
