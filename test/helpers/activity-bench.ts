// What the activity tests share: a secure stack (real store, trainer and proxy processes, tokens on) with
// in-process runners of a test agent, and running one activity as a fresh attempt (no heartbeat details),
// as a worker would after a retry.
import { MockActivityEnvironment } from '@temporalio/testing';
import type { Stack } from '../../dev/stack';
import { closeServices } from '../../activities/services';
import { startRunners, type AgentFunction } from '../../agents/runner';
import { startSecureStack, type Secrets } from './secure-stack';

export interface ActivityBench {
  stack: Stack;
  dataDir: string;
  stop(): Promise<void>;
}

export async function startActivityBench(prefix: string, secrets: Secrets, runnerCount: number, agent: AgentFunction<string>): Promise<ActivityBench> {
  const { stack, dataDir } = await startSecureStack(prefix, secrets, { runners: 0 });
  const runners = startRunners(runnerCount, agent, { storeUrl: stack.storeUrl, pollIntervalMs: 100, log: () => {} });
  return {
    stack,
    dataDir,
    async stop() {
      await runners.stop();
      await closeServices();
      await stack.stop();
    },
  };
}

/** Runs `fn` once in a fresh mock activity context. */
export async function runActivity<A extends unknown[], R>(fn: (...args: A) => Promise<R>, ...args: A): Promise<R> {
  const env = new MockActivityEnvironment() as unknown as { run(f: unknown, ...a: unknown[]): Promise<unknown> };
  return (await env.run(fn, ...args)) as R;
}
