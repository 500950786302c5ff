// A short run config for tests that train on a started stack (dev/stack.ts) with the quick local test model.
import path from 'node:path';
import { validateRunConfig } from '../../config/load';
import type { RunConfig, RunConfigInput } from '../../config/run-config';
import type { Stack } from '../../dev/stack';

export function localRunConfig(stack: Stack, dataDir: string, runName: string, over: Partial<RunConfigInput> & Pick<RunConfigInput, 'datasetBuilder'>): RunConfig {
  return validateRunConfig({
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
  });
}
