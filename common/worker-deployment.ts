// Worker Versioning (Temporal Worker Deployments), opt in: a worker started with a deployment name and a build id
// polls as that version, and a run stays on the build that started it until it continues as new (the training
// workflow is PINNED; see docs/several-hosts.md, "Rolling upgrades"). Without both, the worker is unversioned as before.
// The environment names are those the Temporal Worker Controller gives its workers.
import type { WorkerDeploymentOptions } from '@temporalio/worker';

export interface DeploymentSettings {
  deploymentName?: string;
  buildId?: string;
}

export class DeploymentSettingsError extends Error {
  override readonly name = 'DeploymentSettingsError';
}

/** Flags first, then TEMPORAL_DEPLOYMENT_NAME / TEMPORAL_WORKER_BUILD_ID; empty strings count as unset. */
export function deploymentSettings(flags: DeploymentSettings, env: NodeJS.ProcessEnv = process.env): DeploymentSettings {
  const pick = (flag: string | undefined, name: string) => (flag?.trim() || env[name]?.trim() || undefined);
  return { deploymentName: pick(flags.deploymentName, 'TEMPORAL_DEPLOYMENT_NAME'), buildId: pick(flags.buildId, 'TEMPORAL_WORKER_BUILD_ID') };
}

/** The worker's deployment options, or undefined (unversioned). One of the two alone is a mistake, named. */
export function workerDeploymentOptions(s: DeploymentSettings): WorkerDeploymentOptions | undefined {
  const { deploymentName, buildId } = s;
  if (!deploymentName && !buildId) return undefined;
  if (!deploymentName) throw new DeploymentSettingsError(`build id ${buildId} given without a deployment name (--deployment-name or TEMPORAL_DEPLOYMENT_NAME)`);
  if (!buildId) throw new DeploymentSettingsError(`deployment ${deploymentName} given without a build id (--build-id or TEMPORAL_WORKER_BUILD_ID)`);
  // The server joins them as "<deployment>.<build>"; a dot in the name would make that ambiguous.
  if (deploymentName.includes('.')) throw new DeploymentSettingsError(`deployment name ${JSON.stringify(deploymentName)} may not contain a dot`);
  return {
    version: { deploymentName, buildId },
    useWorkerVersioning: true,
    // Workflows that do not declare a behaviour (health checks, grading episodes: short ones) stay on the build
    // that started them too; the training workflow declares PINNED itself.
    defaultVersioningBehavior: 'PINNED',
  };
}
