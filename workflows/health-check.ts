// A one-activity workflow that proves a worker is polling the task queue and can run activities.
// `npm run client -- ping` starts it; the smoke test runs it on a real dev server.
import { proxyActivities } from '@temporalio/workflow';
import type { HealthActivities } from '../activities/health';

const { describeWorker } = proxyActivities<HealthActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 3 },
});

export interface HealthReport {
  workflowSawActivity: boolean;
  worker: { hostname: string; pid: number; node: string; uptimeSeconds: number };
  echo: string;
}

export async function healthCheck(echo: string): Promise<HealthReport> {
  const worker = await describeWorker();
  return { workflowSawActivity: true, worker, echo };
}
