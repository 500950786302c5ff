// Short runs on a started stack (dev/stack.ts) with the quick local test model, for tests that train for real.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { validateRunConfig } from '../../config/load';
import type { RunConfig, RunConfigInput } from '../../config/run-config';
import { startStack, type Stack, type StackOptions } from '../../dev/stack';

type Overrides = Partial<RunConfigInput> & Pick<RunConfigInput, 'datasetBuilder'>;

/** The run config as a user would write it (what `prepareRun` takes). */
export function localRunInput(stack: Stack, dataDir: string, runName: string, over: Overrides): RunConfigInput {
  return {
    runName,
    learningRate: 3e-3,
    modelName: 'local/tiny-test',
    rendererName: 'role_colon',
    baseUrl: stack.trainerUrl,
    storeAddress: stack.storeUrl,
    llmProxyPort: stack.proxyPort,
    logPath: path.join(dataDir, 'runs', runName),
    maxTokens: 24,
    rolloutTimeoutSeconds: 120,
    ...over,
  };
}

/** The same, validated with defaults applied (what the client starts a run with). */
export function localRunConfig(stack: Stack, dataDir: string, runName: string, over: Overrides): RunConfig {
  return validateRunConfig(localRunInput(stack, dataDir, runName, over));
}

/** A whole stack on free ports in a fresh temporary folder, serving the quick test model. */
export async function startTestStack(
  name: string,
  over: Partial<StackOptions> = {},
): Promise<{ stack: Stack; dataDir: string; taskQueue: string }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `agl-${name}-`));
  const taskQueue = `${name}-${randomUUID()}`;
  const stack = await startStack({
    dataDir,
    ports: { temporal: 0, ui: 0, store: 0, trainer: 0, proxy: 0 },
    taskQueue,
    // The tiny test model builds in about a second; these tests are about the plumbing, not about learning.
    initialModel: 'local/tiny-test',
    renderer: 'role_colon',
    agent: 'hello',
    runners: 4,
    log: () => {},
    ...over,
  });
  return { stack, dataDir, taskQueue };
}
