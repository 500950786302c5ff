import { ApplicationFailure } from '@temporalio/activity';
import { existsSync, readFileSync } from 'node:fs';
import { numBatches } from '../config/dataset';
import { ConfigError } from '../config/errors';
import { validateRunConfig } from '../config/load';
import { withServiceDefaults } from '../config/service-defaults';
import { runNameOf, type RunConfigInput } from '../config/run-config';
import type { RunSettings } from '../workflows/run-types';
import type { PreparedRun } from './types';
import { DatasetMismatchError, snapshotDataset } from './dataset-snapshot';
import { cutTornTail, runPaths, withRunDirLock, writeFileAtomic } from '../records/run-files';
import { keepRunFile } from './run-records';

/**
 * The run's first step: validates the config (a run started with `temporal workflow start --input-file` gets the
 * same checks as `npm run client -- start`), reads the datasets once into <logPath>/dataset.json and writes
 * config.json, as the cookbook's JsonLogger does. Problems that retrying cannot fix fail the run with the reason.
 */
export async function prepareRun(raw: RunConfigInput): Promise<PreparedRun> {
  let config;
  try {
    // A config started with the Temporal CLI as it is: the services it leaves out are where this worker finds them.
    config = validateRunConfig(withServiceDefaults(raw), 'run config');
  } catch (err) {
    if (err instanceof ConfigError) throw ApplicationFailure.nonRetryable(err.message, 'InvalidRunConfig', err.problems);
    throw err;
  }
  let snap;
  try {
    snap = snapshotDataset(config.logPath, config.datasetBuilder);
  } catch (err) {
    if (err instanceof DatasetMismatchError || (err as NodeJS.ErrnoException).code === 'ENOENT' || err instanceof SyntaxError) {
      throw ApplicationFailure.nonRetryable((err as Error).message, 'DatasetError');
    }
    throw err;
  }
  const { trainDataset: _t, valDataset: _v, ...datasetBuilder } = config.datasetBuilder;
  const settings: RunSettings = { ...config, runName: runNameOf(config), datasetBuilder };
  const paths = runPaths(config.logPath);
  if (!existsSync(paths.config)) writeFileAtomic(paths.config, JSON.stringify(settings, null, 2));
  // A run resumed after a crash: files a dead worker left with a torn last line are valid JSONL again at once.
  await withRunDirLock(paths.dir, () => [paths.metrics, paths.checkpoints, paths.trace].forEach(cutTornTail));
  // Workers on other hosts read these from the store (run-records.ts localRunFile).
  await keepRunFile(settings, 'config.json', readFileSync(paths.config, 'utf8'));
  await keepRunFile(settings, 'dataset.json', readFileSync(paths.dataset, 'utf8'));
  return {
    settings,
    numBatches: numBatches(snap.snapshot.trainPlan),
    numValTasks: snap.snapshot.val.length,
    datasetSha256: snap.sha256,
    note: snap.snapshot.note ?? `${snap.snapshot.train.length} training tasks, ${snap.snapshot.val.length} validation tasks`,
  };
}
