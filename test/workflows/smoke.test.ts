// A workflow and an activity on a real worker against a real dev server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startTestTemporal, workflowBundle } from '../helpers/temporal';
import { healthActivities } from '../../activities/health';
import { healthCheck } from '../../workflows';

let env: TestWorkflowEnvironment | undefined;
before(async () => {
  env = await startTestTemporal();
});
after(async () => {
  await env?.teardown();
});

test('healthCheck runs its activity on a real worker and returns what the activity saw', async () => {
  const taskQueue = `smoke-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env!.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: healthActivities,
  });
  const report = await worker.runUntil(
    env!.client.workflow.execute(healthCheck, { taskQueue, workflowId: `smoke-${randomUUID()}`, args: ['hello'] }),
  );
  assert.equal(report.echo, 'hello');
  assert.equal(report.worker.pid, process.pid, 'the activity ran in this process, on the worker we started');
  assert.equal(report.workflowSawActivity, true);
});
