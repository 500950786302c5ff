import { ApplicationFailure } from '@temporalio/activity';
import { existsSync } from 'node:fs';
import { numBatches } from '../config/dataset';
import type { RunConfig } from '../config/run-config';
import type { PreparedRun } from './types';
import { DatasetMismatchError, snapshotDataset } from './dataset-snapshot';
import { runPaths, writeFileAtomic } from './run-files';

/** Reads the datasets once into <logPath>/dataset.json and writes config.json (as the cookbook's JsonLogger). */
export async function prepareRun(config: RunConfig, runName: string): Promise<PreparedRun> {
  const paths = runPaths(config.logPath);
  let snap;
  try {
    snap = snapshotDataset(config.logPath, config.datasetBuilder);
  } catch (err) {
    // A changed dataset or an unreadable file will not fix itself: fail the run with the reason.
    if (err instanceof DatasetMismatchError || (err as NodeJS.ErrnoException).code === 'ENOENT' || err instanceof SyntaxError) {
      throw ApplicationFailure.nonRetryable((err as Error).message, 'DatasetError');
    }
    throw err;
  }
  if (!existsSync(paths.config)) {
    const { trainDataset: _t, valDataset: _v, ...datasetBuilder } = config.datasetBuilder;
    writeFileAtomic(paths.config, JSON.stringify({ ...config, runName, datasetBuilder }, null, 2));
  }
  return {
    numBatches: numBatches(snap.snapshot.trainPlan),
    numValTasks: snap.snapshot.val.length,
    datasetSha256: snap.sha256,
    note: snap.snapshot.note ?? `${snap.snapshot.train.length} training tasks, ${snap.snapshot.val.length} validation tasks`,
  };
}
