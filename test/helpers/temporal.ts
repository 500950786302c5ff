// A real, ephemeral Temporal dev server for tests, started from the provisioned CLI (never a download), plus the
// workflow bundle built once per test file.
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Runtime, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import path from 'node:path';
import { provisionTemporalCli } from '../../dev/temporal-cli';
import { ALL_SEARCH_ATTRIBUTES } from '../../shared/search-attributes';

let runtimeInstalled = false;
/** Workers log at WARN in tests, so test output stays readable. */
export function quietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({ logger: new DefaultLogger('WARN') });
}

export async function startTestTemporal(extraArgs: string[] = []): Promise<TestWorkflowEnvironment> {
  quietRuntime();
  const cli = await provisionTemporalCli(() => {});
  const opts = {
    server: {
      executable: { type: 'existing-path' as const, path: cli.path },
      searchAttributes: ALL_SEARCH_ATTRIBUTES,
      extraArgs: ['--dynamic-config-value', 'history.defaultWorkflowTaskTimeout="60s"', ...extraArgs],
    },
  };
  try {
    return await TestWorkflowEnvironment.createLocal(opts);
  } catch (err) {
    // The SDK gives the server 5 s to come up; a busy 2-core machine can miss that once.
    process.stderr.write(`dev server start failed once (${(err as Error).message}); retrying\n`);
    return await TestWorkflowEnvironment.createLocal(opts);
  }
}

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({
    workflowsPath: path.resolve(__dirname, '../../workflows/index.ts'),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } as never,
  });
  return bundle;
}
