// The hello task with a long tail: before answering, the agent waits a per-rollout delay drawn from a log-normal
// distribution whose p99 is 10x its median, as real agents' tool calls, retries and long conversations make some
// rollouts far slower than most. Same task, same reward as `hello`. The delay is seeded by the rollout (its
// `sampling_seed`, else its id), so a retried rollout waits as long as its first attempt did, and two runs with
// the same dataset seed see the same delays batch for batch. `AGL_LONGTAIL_MEDIAN_MS` sets the median (300 ms).
import { createHash } from 'node:crypto';
import type { AgentFunction } from '../runner';
import type { AttemptedRollout } from '../../store/types';
import { helloAgent } from './hello';

/** The standard normal's 99th percentile. */
export const Z_99 = 2.3263478740408408;
/** The log-normal's sigma for p99 / p50 = 10. */
export const LONGTAIL_SIGMA = Math.log(10) / Z_99;
/** z is clipped to ±4.5 (changes the distribution with probability 7e-6): the longest wait is 89x the median. */
export const Z_CAP = 4.5;
export const DEFAULT_MEDIAN_MS = 300;

/** A standard normal deviate from a seed: two uniforms from sha256, then Box–Muller. */
export function seededNormal(seed: string | number): number {
  const h = createHash('sha256').update(`hello-longtail/${seed}`).digest();
  const u1 = (h.readUInt32BE(0) + 0.5) / 2 ** 32;
  const u2 = (h.readUInt32BE(4) + 0.5) / 2 ** 32;
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

/** The delay (ms) of the rollout with this seed: log-normal, median `medianMs`, p99 = 10 x median. */
export function longTailDelayMs(seed: string | number, medianMs: number): number {
  const z = Math.max(-Z_CAP, Math.min(Z_CAP, seededNormal(seed)));
  return medianMs * Math.exp(LONGTAIL_SIGMA * z);
}

/** What seeds a rollout's delay: `metadata.sampling_seed` when the training workflow set it, else the rollout id. */
export function delaySeedOf(rollout: Pick<AttemptedRollout, 'rollout_id' | 'metadata'>): string {
  const s = rollout.metadata?.sampling_seed;
  return typeof s === 'number' || typeof s === 'string' ? `seed:${s}` : `rollout:${rollout.rollout_id}`;
}

/** The median from `AGL_LONGTAIL_MEDIAN_MS` (a non-negative number of ms), else 300. */
export function medianFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.AGL_LONGTAIL_MEDIAN_MS;
  if (raw === undefined || raw.trim() === '') return DEFAULT_MEDIAN_MS;
  const ms = Number(raw);
  if (!Number.isFinite(ms) || ms < 0) throw new Error(`AGL_LONGTAIL_MEDIAN_MS must be a non-negative number of milliseconds, got ${JSON.stringify(raw)}`);
  return ms;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error('runner stopping'));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Error('runner stopping'));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** The hello agent, after waiting the rollout's long-tail delay (median `medianMs`, default from the environment). */
export function helloLongTailAgentWith(medianMs: number = medianFromEnv()): AgentFunction<string> {
  return async (task, ctx) => {
    await sleep(longTailDelayMs(delaySeedOf(ctx.rollout), medianMs), ctx.signal);
    return helloAgent(task, ctx);
  };
}

/** Reads `AGL_LONGTAIL_MEDIAN_MS` on its first rollout (a bad value fails that rollout with the reason). */
export const helloLongTailAgent: AgentFunction<string> = (() => {
  let agent: AgentFunction<string> | null = null;
  return (task, ctx) => (agent ??= helloLongTailAgentWith())(task, ctx);
})();
