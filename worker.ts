// The Temporal worker: runs the training workflows and their activities. It keeps nothing that matters in
// memory, so it can be killed and restarted at any moment. Shuts down gracefully on SIGINT/SIGTERM.
import { parseArgs } from 'node:util';
import path from 'node:path';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from './activities';
import { setServiceOverrides } from './activities/services';
import { temporalSettings } from './common/temporal-settings';
import { runMain, UsageError } from './common/service-args';

async function main(): Promise<void> {
  let flags;
  try {
    flags = parseArgs({
      options: {
        address: { type: 'string' },
        namespace: { type: 'string' },
        'task-queue': { type: 'string' },
        store: { type: 'string' },
        proxy: { type: 'string' },
        trainer: { type: 'string' },
      },
      strict: true,
    }).values;
  } catch (err) {
    throw new UsageError(`worker: ${(err as Error).message}`);
  }
  const settings = temporalSettings({ address: flags.address, namespace: flags.namespace, taskQueue: flags['task-queue'] });
  // Service URLs of this worker's machine; when unset, each run's config says where the services are.
  setServiceOverrides({
    storeUrl: flags.store ?? process.env.AGL_STORE_URL,
    proxyUrl: flags.proxy ?? process.env.AGL_PROXY_URL,
    tinkerUrl: flags.trainer ?? process.env.TINKER_BASE_URL,
  });
  const connection = await NativeConnection.connect({ address: settings.address });
  const worker = await Worker.create({
    connection,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    // AGL_WORKFLOW_BUNDLE: a prebuilt bundle (bundleWorkflowCode) instead of bundling at every start, which takes
    // ~15 s on 2 cores; the chaos tests restart the worker many times.
    ...(process.env.AGL_WORKFLOW_BUNDLE
      ? { workflowBundle: { codePath: process.env.AGL_WORKFLOW_BUNDLE } }
      : { workflowsPath: path.join(__dirname, 'workflows', 'index.ts') }),
    activities: createActivities(),
  });
  process.stdout.write(`worker polling task queue ${settings.taskQueue} on ${settings.address} (namespace ${settings.namespace})\n`);
  await worker.run(); // returns after SIGINT/SIGTERM once in-flight tasks are done
  await connection.close();
  process.stdout.write('worker stopped\n');
}

runMain(main);
