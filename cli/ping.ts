// `npm run client -- ping`: runs the health-check workflow on the worker and deletes it afterwards, so pings never
// show among the runs (in the UI's workflow list or `temporal workflow list`).
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { TemporalSettings } from '../common/temporal-settings';
import type { HealthReport } from '../workflows/health-check';
import { CommandError } from './mistakes';

export const PING_PREFIX = 'agl-ping-';

export async function ping(client: Client, settings: TemporalSettings): Promise<HealthReport> {
  const queue = await client.workflowService.describeTaskQueue({ namespace: settings.namespace, taskQueue: { name: settings.taskQueue }, taskQueueType: 1 });
  if ((queue.pollers ?? []).length === 0) {
    throw new CommandError(`no worker polls the task queue ${settings.taskQueue} (is npm start or npm run worker running? --task-queue names another queue)`);
  }
  const workflowId = `${PING_PREFIX}${randomUUID()}`;
  const handle = await client.workflow.start('healthCheck', {
    taskQueue: settings.taskQueue,
    workflowId,
    args: ['ping'],
    workflowExecutionTimeout: '60 seconds',
  });
  try {
    return (await handle.result()) as HealthReport;
  } finally {
    // Also when the ping failed or timed out: nothing of it is left behind.
    await client.workflowService
      .deleteWorkflowExecution({ namespace: settings.namespace, workflowExecution: { workflowId, runId: handle.firstExecutionRunId } })
      .catch(() => undefined);
  }
}
