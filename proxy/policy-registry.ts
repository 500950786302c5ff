// Policies by id: every policy a rollout in flight may still need, beside the current one (policy.ts). A
// rollout-scoped call samples from the policy its rollout was enqueued under (rollout-policy.ts finds it in the
// store); when that is not the current policy, it leases it here. Entries are created on first use through the
// SamplerFactory (concurrent first calls share one creation), never hold or drain calls, and are released once
// no call has used them for `idleMs`; a later call re-creates one from the store. A policy a switch replaced is
// adopted with its sampler, so the rollouts still on it do not open a second sampling session.
import { ApiError } from './errors';
import { rendererFor, samplerTarget } from './policy';
import type { ActivePolicy, Lease, PolicyManager } from './policy';
import type { PolicySpec } from './policy-spec';
import { SamplerError } from './sampler';
import type { SamplerFactory } from './sampler';

interface Entry {
  spec: PolicySpec;
  ready: Promise<ActivePolicy>;
  /** Set once `ready` resolved. */
  policy: ActivePolicy | null;
  inFlight: number;
  lastUse: number;
  timer: NodeJS.Timeout | null;
}

export interface RegistryEntryState {
  switchId: string;
  inFlight: number;
  ready: boolean;
  idleMs: number;
}

export interface PolicyRegistryOptions {
  factory: SamplerFactory;
  /** An entry no call has used for this long is released (default 120 s). */
  idleMs?: number;
  log?: (line: string) => void;
}

/** The error for a call whose wait ended because its client left or its deadline passed. */
export function abortedCall(signal: AbortSignal): ApiError {
  return (signal.reason as Error)?.name === 'TimeoutError'
    ? new ApiError(504, 'the policy was not ready before the call deadline', 'timeout', null, 'timeout')
    : new ApiError(499, 'client closed the request', 'api_error', null, 'client_closed');
}

/** `p`, or the abort of `signal` as an ApiError, whichever comes first. */
export function untilAborted<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(abortedCall(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortedCall(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

export class PolicyRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly idleMs: number;
  /** Entries created through the factory (adopted ones not counted). */
  created = 0;
  released = 0;

  constructor(private readonly opts: PolicyRegistryOptions) {
    this.idleMs = opts.idleMs ?? 120_000;
  }

  has(switchId: string): boolean {
    return this.entries.has(switchId);
  }

  /** The loaded policy of a switchId, if the registry holds it. */
  peek(switchId: string): ActivePolicy | null {
    return this.entries.get(switchId)?.policy ?? null;
  }

  inFlightCalls(): number {
    let n = 0;
    for (const e of this.entries.values()) n += e.inFlight;
    return n;
  }

  describe(): RegistryEntryState[] {
    const now = Date.now();
    return [...this.entries.values()].map((e) => ({ switchId: e.spec.switchId, inFlight: e.inFlight, ready: e.policy !== null, idleMs: e.inFlight > 0 ? 0 : now - e.lastUse }));
  }

  /** Keeps a policy a switch replaced (with its sampler), unless the registry already holds that switchId. */
  adopt(policy: ActivePolicy): void {
    if (this.entries.has(policy.spec.switchId)) return;
    const entry: Entry = { spec: policy.spec, ready: Promise.resolve(policy), policy, inFlight: 0, lastUse: Date.now(), timer: null };
    this.entries.set(policy.spec.switchId, entry);
    this.scheduleRelease(entry);
  }

  /** A slot on the policy `spec` names; creates its sampler on first use. Never waits for a switch. */
  async acquire(spec: PolicySpec, signal?: AbortSignal): Promise<Lease> {
    let entry = this.entries.get(spec.switchId);
    if (!entry) {
      // The renderer first: an unknown model or renderer is a 400 before any sampler is asked for.
      const renderer = rendererFor(spec);
      const created: Entry = { spec, ready: null!, policy: null, inFlight: 0, lastUse: Date.now(), timer: null };
      created.ready = this.opts.factory.create(samplerTarget(spec), spec.modelName).then(
        (sampler) => (created.policy = { spec, sampler, renderer, activatedAt: Date.now() }),
        (err: unknown) => {
          // Not kept: the next call tries again (the trainer may be back by then).
          if (this.entries.get(spec.switchId) === created) this.entries.delete(spec.switchId);
          throw err instanceof SamplerError
            ? new ApiError(err.status, `sampler for policy ${spec.switchId}: ${err.message}`, 'api_error', null, 'sampler_error')
            : err;
        },
      );
      created.ready.catch(() => undefined);
      this.entries.set(spec.switchId, created);
      this.created++;
      this.opts.log?.(`loading policy ${spec.switchId} (${spec.samplerPath ?? spec.baseModel}) for the rollouts enqueued under it`);
      entry = created;
    }
    const e = entry;
    e.inFlight++;
    if (e.timer) clearTimeout(e.timer);
    e.timer = null;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      e.inFlight--;
      e.lastUse = Date.now();
      if (e.inFlight === 0) this.scheduleRelease(e);
    };
    try {
      const policy = e.policy ?? (await untilAborted(e.ready, signal));
      return { policy, release };
    } catch (err) {
      release();
      throw err;
    }
  }

  private scheduleRelease(e: Entry): void {
    if (e.timer) clearTimeout(e.timer);
    e.timer = setTimeout(() => {
      e.timer = null;
      if (e.inFlight > 0 || this.entries.get(e.spec.switchId) !== e) return;
      this.entries.delete(e.spec.switchId);
      this.released++;
      this.opts.log?.(`released policy ${e.spec.switchId}: no call used it for ${this.idleMs} ms`);
    }, this.idleMs);
    e.timer.unref();
  }

  /** Drops every entry and its timer (proxy shutdown). */
  close(): void {
    for (const e of this.entries.values()) if (e.timer) clearTimeout(e.timer);
    this.entries.clear();
  }
}

/**
 * The lease for a call that should sample from `spec` (null: the current policy). The current policy's calls go
 * through the manager, so a synchronous switch drains and holds them exactly as before; a call whose policy is
 * being switched to waits for that switch; any other policy is served from the registry, without waiting.
 */
export async function leasePolicy(manager: PolicyManager, registry: PolicyRegistry, spec: PolicySpec | null, waitMs: number, signal?: AbortSignal): Promise<Lease> {
  if (!spec) return manager.acquire(waitMs, signal);
  const started = Date.now();
  const pending = manager.pendingSwitch(spec.switchId);
  if (pending) await untilAborted(pending.catch(() => undefined), signal);
  if (manager.current()?.spec.switchId === spec.switchId) {
    const lease = await manager.acquire(Math.max(0, waitMs - (Date.now() - started)), signal);
    if (lease.policy.spec.switchId === spec.switchId) return lease;
    lease.release(); // a switch replaced it while the call waited: the registry has adopted it
  }
  return registry.acquire(spec, signal);
}

/** The renderer (tokenizer) of the policy `spec` names, loaded or not (to rebuild a recorded answer). */
export function rendererOf(manager: PolicyManager, registry: PolicyRegistry, spec: PolicySpec): ActivePolicy['renderer'] {
  const current = manager.current();
  if (current?.spec.switchId === spec.switchId) return current.renderer;
  return registry.peek(spec.switchId)?.renderer ?? rendererFor(spec);
}
