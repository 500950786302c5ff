// The current policy and the switch ("proxy restart"): prepare the new sampler, hold new calls, drain in-flight
// calls (bounded wait), swap, release the held calls. The same switchId twice is one switch. A switch with
// `drain: false` (async runs) swaps at once: calls in flight finish on the policy they leased. The current policy
// serves unscoped calls and rollouts whose resources name no policy (policy-registry.ts serves the others).
import { quote } from '../common/front-door';
import { getRenderer, getTokenizer } from '../chat';
import { imageProcessorFor } from '../chat/image-chunk';
import type { Renderer } from '../chat';
import { ApiError } from './errors';
import { fingerprint, tokenizerModel } from './policy-spec';
import type { PolicySpec } from './policy-spec';
import type { Sampler, SamplerFactory, SamplerTarget } from './sampler';
import { BoundedMap } from '../common/bounded-map';

export interface ActivePolicy {
  spec: PolicySpec;
  sampler: Sampler;
  renderer: Renderer;
  activatedAt: number;
}

export interface Lease {
  policy: ActivePolicy;
  release(): void;
}

export interface SwitchResult {
  /** false when this switchId had already been applied (or is the one being applied). */
  switched: boolean;
  policy: PolicySpec;
  /** Calls still running when the drain wait ran out (they finish on the old policy). */
  undrained: number;
  drainMs: number;
  /** Whether this switch held and drained calls (false: swapped at once). */
  drain: boolean;
}

export interface PolicyManagerOptions {
  factory: SamplerFactory;
  /** Longest wait for in-flight calls during a switch. */
  drainTimeoutMs: number;
  /** How many applied switchIds to remember. */
  rememberSwitches?: number;
  /** Called after each switch, e.g. to persist the policy for a restart. */
  onSwitch?: (spec: PolicySpec) => void;
  /** Called with the policy a switch replaced (the registry keeps its sampler for the rollouts still on it). */
  onRetire?: (policy: ActivePolicy) => void;
}

/** Renderer and tokenizer of a spec; throws ApiError(400) when the model or renderer is unknown. */
export function rendererFor(spec: PolicySpec): Renderer {
  try {
    const model = tokenizerModel(spec);
    return getRenderer(spec.renderer, getTokenizer(model), { imageProcessor: imageProcessorFor(model), modelName: model });
  } catch (err) {
    throw new ApiError(400, (err as Error).message, 'invalid_request_error', 'renderer', 'invalid_value');
  }
}

export function samplerTarget(spec: PolicySpec): SamplerTarget {
  return spec.samplerPath ? { samplerPath: spec.samplerPath } : { baseModel: spec.baseModel! };
}

export class PolicyManager {
  private active: ActivePolicy | null = null;
  private holding = false;
  private inFlight = 0;
  private waiters: (() => void)[] = [];
  private readonly applied: BoundedMap<string, string>;
  private readonly pending = new Map<string, { fp: string; result: Promise<SwitchResult> }>();
  private queue: Promise<unknown> = Promise.resolve();
  switches = 0;

  constructor(private readonly opts: PolicyManagerOptions) {
    this.applied = new BoundedMap(opts.rememberSwitches ?? 1000);
  }

  current(): ActivePolicy | null {
    return this.active;
  }

  inFlightCalls(): number {
    return this.inFlight;
  }

  private notify(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  private waitChange(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, Math.max(0, ms));
      this.waiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }

  /** A slot on the current policy; waits while a switch holds calls or while there is no policy yet. */
  async acquire(waitMs: number, signal?: AbortSignal): Promise<Lease> {
    const deadline = Date.now() + waitMs;
    while (this.holding || !this.active) {
      if (signal?.aborted) throw new ApiError(499, 'client closed the request', 'api_error', null, 'client_closed');
      const left = deadline - Date.now();
      if (left <= 0) {
        throw this.active
          ? new ApiError(503, 'a policy switch is in progress; try again', 'api_error', null, 'policy_switching')
          : new ApiError(503, 'the proxy has no policy yet (POST /admin/policy or start it with --model)', 'api_error', null, 'no_policy');
      }
      await this.waitChange(Math.min(left, 1000));
    }
    const policy = this.active;
    this.inFlight++;
    let released = false;
    return {
      policy,
      release: () => {
        if (released) return;
        released = true;
        this.inFlight--;
        if (this.inFlight === 0) this.notify();
      },
    };
  }

  /** The switch to this switchId while it is being applied (a call of its rollouts waits for it), else null. */
  pendingSwitch(switchId: string): Promise<SwitchResult> | null {
    return this.pending.get(switchId)?.result ?? null;
  }

  /**
   * Applies a spec once per switchId; switches run one at a time in arrival order. `drain` (default true) holds
   * and drains calls; false swaps at once. drain is not part of the idempotency fingerprint.
   */
  switchTo(spec: PolicySpec, opts: { drain?: boolean } = {}): Promise<SwitchResult> {
    const drain = opts.drain ?? true;
    const fp = fingerprint(spec);
    const done = this.applied.get(spec.switchId);
    if (done !== undefined) {
      if (done !== fp) return Promise.reject(conflict(spec.switchId));
      return Promise.resolve({ switched: false, policy: this.active!.spec, undrained: 0, drainMs: 0, drain });
    }
    const running = this.pending.get(spec.switchId);
    if (running) {
      if (running.fp !== fp) return Promise.reject(conflict(spec.switchId));
      return running.result.then((r) => ({ ...r, switched: false }));
    }
    const result = this.queue.then(() => (drain ? this.apply(spec, fp) : this.swap(spec, fp)));
    this.pending.set(spec.switchId, { fp, result });
    const cleanup = () => this.pending.delete(spec.switchId);
    result.then(cleanup, cleanup);
    this.queue = result.catch(() => undefined);
    return result;
  }

  private async apply(spec: PolicySpec, fp: string): Promise<SwitchResult> {
    const renderer = rendererFor(spec);
    // Prepare before holding calls, so the pause is only the drain.
    const sampler = await this.opts.factory.create(samplerTarget(spec), spec.modelName);
    this.holding = true;
    const started = Date.now();
    try {
      const deadline = started + this.opts.drainTimeoutMs;
      while (this.inFlight > 0 && Date.now() < deadline) await this.waitChange(deadline - Date.now());
      const undrained = this.inFlight;
      this.activate({ spec, sampler, renderer, activatedAt: Date.now() }, fp);
      return { switched: true, policy: spec, undrained, drainMs: Date.now() - started, drain: true };
    } finally {
      this.holding = false;
      this.notify();
    }
  }

  /** The switch without drain: prepare, then swap at once; calls in flight keep the policy they leased. */
  private async swap(spec: PolicySpec, fp: string): Promise<SwitchResult> {
    const renderer = rendererFor(spec);
    const sampler = await this.opts.factory.create(samplerTarget(spec), spec.modelName);
    const undrained = this.inFlight;
    this.activate({ spec, sampler, renderer, activatedAt: Date.now() }, fp);
    this.notify();
    return { switched: true, policy: spec, undrained, drainMs: 0, drain: false };
  }

  private activate(next: ActivePolicy, fp: string): void {
    const previous = this.active;
    this.active = next;
    this.switches++;
    this.applied.set(next.spec.switchId, fp);
    try {
      this.opts.onSwitch?.(next.spec);
    } catch {
      /* persisting is best effort; the switch itself happened */
    }
    if (previous && previous.spec.switchId !== next.spec.switchId) this.opts.onRetire?.(previous);
  }
}

function conflict(switchId: string): ApiError {
  return new ApiError(409, `switchId ${quote(switchId)} was already used for a different policy`, 'invalid_request_error', 'switchId', 'switch_conflict');
}
