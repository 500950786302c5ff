// The worker's activity interceptor that names the service behind a network failure: an activity that cannot
// reach the store, the proxy or the trainer fails (retryably, so Temporal keeps retrying what a retry can fix) with
// "store http://h:4747 unreachable (connection refused): ...". Temporal keeps that as the pending activity's last
// failure, which `client status`, `client watch` and the UI's pending-activity view show.
import { ApplicationFailure } from '@temporalio/activity';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import { describeNetworkFailure } from '../common/service-failure';
import type { RunSettings } from '../shared/run-types';
import { DEFAULT_BASE_URL } from '../tinker';
import { proxyUrlFor, storeUrlFor, tinkerUrlFor } from './services';

/** The services a run's activity talks to, from its settings (the first argument of most activities). */
function servicesOf(args: unknown[]): Record<string, string | null> {
  const s = args[0] as Partial<RunSettings> | undefined;
  if (!s || typeof s !== 'object' || !('storeAddress' in s)) return {};
  const settings = s as RunSettings;
  return {
    store: storeUrlFor(settings),
    trainer: tinkerUrlFor(settings) ?? (process.env.TINKER_BASE_URL || DEFAULT_BASE_URL),
    proxy: proxyUrlFor(settings),
  };
}

export function namingUnreachableServices(): ActivityInboundCallsInterceptor {
  return {
    async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
      try {
        return await next(input);
      } catch (err) {
        if (err instanceof ApplicationFailure) throw err;
        const named = describeNetworkFailure(err, servicesOf(input.args));
        if (!named) throw err;
        throw ApplicationFailure.create({ message: named, type: 'ServiceUnreachable', nonRetryable: false, cause: err instanceof Error ? err : undefined });
      }
    },
  };
}
