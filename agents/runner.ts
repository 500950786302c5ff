// The runner library: polls the store for rollouts, runs an agent function on each, records its reward as the
// annotation span of §6.2 and reports the attempt succeeded or failed (§7.1, for TypeScript agents).
// Differences from the Python LitAgentRunner, on purpose: missing resources fail the attempt (instead of leaving
// it `preparing` forever), and a running attempt heartbeats (`last_heartbeat_time`) so `unresponsive_seconds`
// works for agents that make no LLM calls for a while.
import { hostname } from 'node:os';
import { StoreClient, StoreHttpError } from '../store/client';
import type { AttemptedRollout, Json, NamedResources, ResourcesUpdate } from '../store/types';
import { faultFires, faultPoint } from '../common/fault-points';
import { pickLlm, type AgentLlm } from '../store/llm-resource';
import { watchProxy, type ProxyChoice } from './proxy-choice';
import { rewardSpan } from '../store/reward-span';
import { rewardFromResult } from './reward';
import { retry } from '../common/retry';

export interface AgentContext {
  /** The LLM to call, scoped to this rollout/attempt when it is the proxy; null when resources have none. */
  llm: AgentLlm | null;
  rollout: AttemptedRollout;
  resources: NamedResources;
  /** Aborted when the runner stops. */
  signal: AbortSignal;
  /** Records a reward now (the runner also records a number the agent returns). */
  emitReward(reward: number): Promise<void>;
}

/** An agent: returns its reward (or nothing, when it emitted it itself); throwing fails the attempt. */
export type AgentFunction<T = Json> = (task: T, ctx: AgentContext) => Promise<number | null | void> | number | null | void;

export interface RunnerOptions {
  storeUrl: string;
  /**
   * The agent this runner runs: it takes only rollouts of runs that name it (run config `agent`). Without it, only
   * rollouts of runs that name no agent, so runners of one agent never serve another agent's run.
   */
  agent?: string;
  workerId?: string;
  client?: StoreClient;
  /** Pause between polls of an empty queue (ms, ±25% jitter). */
  pollIntervalMs?: number;
  /** Worker heartbeat (POST /workers/{id}) period (ms). */
  heartbeatIntervalMs?: number;
  /** Attempt heartbeat (last_heartbeat_time) period while an agent runs (ms). */
  attemptHeartbeatMs?: number;
  /** Stop after this many rollouts. */
  maxRollouts?: number;
  /** How long a reward or the final status keeps being retried while the store is unreachable (ms, default 60 s). */
  reportRetryMs?: number;
  /**
   * Proxies to send the agent's LLM calls to instead of the one the rollout's resources name (shared by a group's
   * runners): calls are spread over them and a proxy an attempt failed on is skipped for a while.
   */
  proxies?: ProxyChoice;
  log?: (line: string) => void;
}

export interface RunnerStats {
  succeeded: number;
  failed: number;
}

const jitter = (ms: number) => ms * (0.75 + Math.random() * 0.5);

export class AgentRunner<T = Json> {
  readonly workerId: string;
  readonly stats: RunnerStats = { succeeded: 0, failed: 0 };
  private readonly client: StoreClient;
  private readonly abort = new AbortController();
  private readonly log: (line: string) => void;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;

  constructor(private readonly agent: AgentFunction<T>, private readonly options: RunnerOptions) {
    this.workerId = options.workerId ?? `ts-runner-${process.pid}-${Math.random().toString(16).slice(2, 8)}`;
    this.client = options.client ?? new StoreClient(options.storeUrl);
    this.log = options.log ?? ((line) => process.stderr.write(`[runner ${this.workerId}] ${line}\n`));
  }

  /** Starts polling; the returned promise settles when the runner stops. */
  start(): Promise<void> {
    this.loop ??= this.run();
    return this.loop;
  }

  /** Stops polling; a rollout in progress is finished (its agent sees `signal` aborted) before this resolves. */
  async stop(): Promise<void> {
    this.abort.abort();
    this.wake?.();
    await this.loop;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() { clearTimeout(timer); resolve(); }
      this.wake = done;
    });
  }

  /**
   * Repeats an idempotent store call through a store restart (the client's own retries cover a few seconds), so a
   * finished rollout is not lost, or retried as a dead attempt, because the store was briefly away. The store's
   * refusals (4xx) are final.
   */
  private async persist<R>(call: () => Promise<R>): Promise<R> {
    return retry(call, {
      firstPauseMs: 500,
      maxPauseMs: 4_000,
      deadline: Date.now() + (this.options.reportRetryMs ?? 60_000),
      retryable: (err) => !(err instanceof StoreHttpError && err.status < 500 && err.status !== 408 && err.status !== 429),
    });
  }

  private async run(): Promise<void> {
    const heartbeat = setInterval(() => void this.heartbeat(), this.options.heartbeatIntervalMs ?? 10_000);
    heartbeat.unref();
    void this.heartbeat();
    let processed = 0;
    try {
      while (!this.abort.signal.aborted && (this.options.maxRollouts === undefined || processed < this.options.maxRollouts)) {
        let rollout: AttemptedRollout | null = null;
        try {
          rollout = await this.client.dequeueRollout(this.workerId, { timeoutMs: 10_000, agent: this.options.agent ?? null });
        } catch (err) {
          this.log(`dequeue failed: ${(err as Error).message}`);
        }
        if (!rollout) {
          await this.sleep(jitter(this.options.pollIntervalMs ?? 500));
          continue;
        }
        await this.runOne(rollout);
        processed++;
      }
    } finally {
      clearInterval(heartbeat);
    }
  }

  private async heartbeat(): Promise<void> {
    try {
      await this.client.updateWorker(this.workerId, {
        host: hostname(), pid: process.pid, runner: 'agl-temporal-ts', agent: this.options.agent ?? null, timestamp: new Date().toISOString(),
        succeeded: this.stats.succeeded, failed: this.stats.failed,
      }, { timeoutMs: 10_000 });
    } catch (err) {
      this.log(`worker heartbeat failed: ${(err as Error).message}`);
    }
  }

  private async resourcesFor(rollout: AttemptedRollout): Promise<ResourcesUpdate | null> {
    return rollout.resources_id
      ? this.client.getResourcesById(rollout.resources_id)
      : this.client.getLatestResources();
  }

  private async runOne(rollout: AttemptedRollout): Promise<void> {
    const rid = rollout.rollout_id;
    const aid = rollout.attempt.attempt_id;
    let status: 'succeeded' | 'failed' = 'failed';
    const proxy = await this.options.proxies?.pickAnswering();
    const beat = setInterval(() => {
      this.client.updateAttempt(rid, aid, { last_heartbeat_time: Date.now() / 1000 }, { timeoutMs: 10_000 })
        .catch((err: Error) => this.log(`attempt heartbeat failed: ${err.message}`));
    }, this.options.attemptHeartbeatMs ?? 5000);
    beat.unref();
    // The agent's signal is this rollout's own: clients that add an abort listener per call and never remove it
    // (the openai SDK does) leave them on a signal that is dropped with the rollout, not on the runner's.
    const rolloutSignal = new AbortController();
    const stop = () => rolloutSignal.abort(this.abort.signal.reason);
    if (this.abort.signal.aborted) stop();
    else this.abort.signal.addEventListener('abort', stop, { once: true });
    // A proxy whose host is lost or cut off leaves calls hanging until their own deadline: fail the attempt instead.
    const unwatch = proxy ? watchProxy(proxy, (why) => rolloutSignal.abort(new Error(why))) : () => {};
    try {
      const resources = await this.resourcesFor(rollout);
      if (!resources) throw new Error(`no resources for rollout ${rid} (resources_id ${rollout.resources_id ?? 'latest'})`);
      await this.client.updateAttempt(rid, aid, { status: 'running', last_heartbeat_time: Date.now() / 1000 });
      const emitReward = async (reward: number) => {
        const seq = await this.persist(() => this.client.getNextSpanSequenceId(rid, aid));
        // One span, sent until it lands: the store keeps one copy of a span id however often it arrives.
        const span = rewardSpan(rid, aid, seq, reward);
        await this.persist(() => this.client.addSpan(span));
      };
      const result = await this.agent(rollout.input as T, {
        llm: pickLlm(resources.resources, rid, aid, proxy), rollout, resources: resources.resources, signal: rolloutSignal.signal, emitReward,
      });
      const meta = rollout.metadata ?? {};
      const scope = typeof meta.agl_run === 'string' ? { run: meta.agl_run, batch: Number(meta.batch) } : null;
      if (scope) faultPoint('runner.mid_rollout', scope);
      // Chaos tests: this once, an agent that reports a reward no run can train on (the store refuses it).
      const reward = scope && faultFires('runner.bad_reward', scope) ? 1e308 : rewardFromResult(result);
      if (reward !== null) await emitReward(reward);
      status = 'succeeded';
      if (proxy) this.options.proxies!.succeeded(proxy);
    } catch (err) {
      if (proxy) this.options.proxies!.failed(proxy);
      this.log(`rollout ${rid} attempt ${aid}${proxy ? ` (proxy ${proxy})` : ''} failed: ${(err as Error)?.message ?? String(err)}`);
    } finally {
      clearInterval(beat);
      unwatch();
      this.abort.signal.removeEventListener('abort', stop);
    }
    try {
      await this.persist(() => this.client.updateAttempt(rid, aid, { status }));
      this.stats[status]++;
    } catch (err) {
      this.log(`could not report ${status} for ${rid}/${aid}: ${(err as Error).message}`);
    }
  }
}

export interface RunnerGroup<T = Json> {
  runners: AgentRunner<T>[];
  /** Settles when every runner stopped (maxRollouts reached or stop()). */
  done: Promise<void>;
  stop(): Promise<void>;
  stats(): RunnerStats;
}

/** Starts `n` runners in this process, sharing one client (one keep-alive connection pool). */
export function startRunners<T = Json>(n: number, agent: AgentFunction<T>, options: RunnerOptions): RunnerGroup<T> {
  const client = options.client ?? new StoreClient(options.storeUrl);
  const prefix = options.workerId ?? `ts-runner-${process.pid}`;
  const runners = Array.from({ length: n }, (_, i) => new AgentRunner(agent, { ...options, client, workerId: `${prefix}-${i}` }));
  const done = Promise.all(runners.map((r) => r.start())).then(() => undefined);
  return {
    runners,
    done,
    async stop() { await Promise.all(runners.map((r) => r.stop())); },
    stats: () => runners.reduce((acc, r) => ({ succeeded: acc.succeeded + r.stats.succeeded, failed: acc.failed + r.stats.failed }), { succeeded: 0, failed: 0 }),
  };
}
