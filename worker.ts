// The Temporal worker: runs the training workflows and their activities. It keeps nothing that matters in
// memory, so it can be killed and restarted at any moment. Shuts down gracefully on SIGINT/SIGTERM.
// It connects as the Temporal CLI does (common/temporal-settings.ts: TEMPORAL_ADDRESS, TEMPORAL_API_KEY,
// TEMPORAL_TLS_*, TEMPORAL_PROFILE...), and refuses to start on a namespace that lacks the runs' search attributes.
// With --deployment-name and --build-id (or TEMPORAL_DEPLOYMENT_NAME, TEMPORAL_WORKER_BUILD_ID) it polls as that
// Worker Deployment Version, for rolling upgrades (common/worker-deployment.ts); without them, unversioned.
import { parseArgs } from 'node:util';
import path from 'node:path';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from './activities';
import { setServiceOverrides } from './activities/services';
import { describeConnection, SettingsError, temporalSettings } from './common/temporal-settings';
import { exitOnSignal, runMain, UsageError } from './common/service-args';
import { openProbed } from './cli/temporal-connect';
import { checkSearchAttributes, describeProblem } from './cli/search-attribute-setup';
import { namingUnreachableServices } from './activities/name-unreachable';
import { DeploymentSettingsError, deploymentSettings, workerDeploymentOptions } from './common/worker-deployment';

async function main(): Promise<void> {
  let flags;
  try {
    flags = parseArgs({
      options: {
        address: { type: 'string' },
        namespace: { type: 'string' },
        profile: { type: 'string' },
        'task-queue': { type: 'string' },
        store: { type: 'string' },
        proxy: { type: 'string' },
        trainer: { type: 'string' },
        'deployment-name': { type: 'string' },
        'build-id': { type: 'string' },
      },
      strict: true,
    }).values;
  } catch (err) {
    throw new UsageError(`worker: ${(err as Error).message}`);
  }
  let settings;
  try {
    settings = temporalSettings({ address: flags.address, namespace: flags.namespace, taskQueue: flags['task-queue'], profile: flags.profile });
  } catch (err) {
    if (err instanceof SettingsError) throw new UsageError(`worker: ${err.message}`);
    throw err;
  }
  let workerDeployment;
  try {
    workerDeployment = workerDeploymentOptions(deploymentSettings({ deploymentName: flags['deployment-name'], buildId: flags['build-id'] }));
  } catch (err) {
    if (err instanceof DeploymentSettingsError) throw new UsageError(`worker: ${err.message}`);
    throw err;
  }
  // Service URLs of this worker's machine; when unset, each run's config says where the services are.
  setServiceOverrides({
    storeUrl: flags.store ?? process.env.AGL_STORE_URL,
    proxyUrl: flags.proxy ?? process.env.AGL_PROXY_URL,
    tinkerUrl: flags.trainer ?? process.env.TINKER_BASE_URL,
  });
  let connection: NativeConnection;
  try {
    connection = await openProbed(settings, () => NativeConnection.connect(settings.connection));
  } catch (err) {
    return fail(`worker: ${(err as Error).message}`);
  }
  const missing = await searchAttributeProblem(connection, settings.namespace, settings.address);
  if (missing) {
    await connection.close();
    return fail(`worker: ${missing}; the worker does not start, since every run would stall on them`);
  }
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
    ...(workerDeployment ? { workerDeploymentOptions: workerDeployment } : {}),
    // An activity that cannot reach a service fails naming it and its URL (shown by `client status` and the UI).
    interceptors: { activity: [() => ({ inbound: namingUnreachableServices() })] },
  });
  // On SIGINT/SIGTERM the SDK drains the worker (its own signal handlers) and cancels the activities in flight; one
  // that does not stop (a call waiting on a service that never answers) held the exit for as long as it waited.
  // Past the services' exit deadline the worker exits anyway: as after a kill, its activities are retried.
  let stopped = (): void => undefined;
  exitOnSignal(() => new Promise<void>((resolve) => (stopped = resolve)), { name: 'worker' });
  const version = workerDeployment ? ` as ${workerDeployment.version.deploymentName}.${workerDeployment.version.buildId}` : '';
  process.stdout.write(`worker polling task queue ${settings.taskQueue}${version} on ${describeConnection(settings)} (namespace ${settings.namespace})\n`);
  await worker.run(); // returns after SIGINT/SIGTERM once in-flight tasks are done
  await connection.close();
  process.stdout.write('worker stopped\n');
  stopped();
}

/** The one line saying which search attributes are missing, or null (also when the server does not let us look). */
async function searchAttributeProblem(connection: NativeConnection, namespace: string, address: string): Promise<string | null> {
  try {
    return describeProblem(await checkSearchAttributes(connection.operatorService, namespace), namespace, address);
  } catch (err) {
    process.stderr.write(`worker: could not list the search attributes of namespace ${namespace} (${(err as Error).message.split('\n')[0]}); going on\n`);
    return null;
  }
}

function fail(line: string): void {
  process.stderr.write(`${line}\n`);
  process.exit(1);
}

runMain(main);
