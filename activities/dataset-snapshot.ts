// The run's tasks, read once and kept in <logPath>/dataset.json, so that every retry, every continue-as-new
// segment and every worker sees exactly the same tasks even if the source files change later.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { batchTaskIndices, buildDatasets, type DatasetPlan, type Task } from '../config/dataset';
import type { DatasetBuilderConfig } from '../config/run-config';
import { runPaths, writeFileAtomic } from '../records/run-files';
import { localRunFile } from './run-records';
import type { RunSettings } from '../workflows/run-types';

export interface DatasetSnapshot {
  /** Hash of the datasetBuilder settings that produced it. */
  settingsSha256: string;
  train: Task[];
  val: Task[];
  trainPlan: DatasetPlan;
  valPlan: DatasetPlan;
  note?: string;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export class DatasetMismatchError extends Error {
  override readonly name = 'DatasetMismatchError';
}

/** Builds the snapshot, or reuses the one already in logPath when its settings are the same. */
export function snapshotDataset(logPath: string, cfg: DatasetBuilderConfig): { snapshot: DatasetSnapshot; sha256: string } {
  const file = runPaths(logPath).dataset;
  const settingsSha256 = sha256(JSON.stringify(cfg));
  if (existsSync(file)) {
    const text = readFileSync(file, 'utf8');
    const existing = JSON.parse(text) as DatasetSnapshot;
    if (existing.settingsSha256 !== settingsSha256) {
      throw new DatasetMismatchError(
        `${file} holds the tasks of a run with other datasetBuilder settings; use another logPath (or runName) for a new run`,
      );
    }
    return { snapshot: existing, sha256: sha256(text) };
  }
  const built = buildDatasets(cfg);
  const snapshot: DatasetSnapshot = {
    settingsSha256,
    train: built.train,
    val: built.val,
    trainPlan: built.trainPlan,
    valPlan: built.valPlan,
    note: built.splitNote,
  };
  const text = JSON.stringify(snapshot);
  writeFileAtomic(file, text);
  return { snapshot, sha256: sha256(text) };
}

/** Reads the snapshot and checks it is the one the workflow was told about. */
export function loadDataset(logPath: string, expectedSha256: string): DatasetSnapshot {
  const file = runPaths(logPath).dataset;
  // An async run asks for it once per group: read, hash and parse the file again only when it changed on disk.
  const st = statSync(file);
  const stamp = `${st.ino}/${st.size}/${st.mtimeMs}`;
  let read = loaded.get(file);
  if (read?.stamp !== stamp) {
    const text = readFileSync(file, 'utf8');
    read = { stamp, sha256: sha256(text), snapshot: JSON.parse(text) as DatasetSnapshot };
    loaded.set(file, read);
  }
  if (read.sha256 !== expectedSha256) throw new DatasetMismatchError(`${file} changed since the run started (sha256 ${read.sha256} != ${expectedSha256})`);
  return read.snapshot;
}

/** The run's snapshot, fetched from the store first when this host has none (a worker on another host). */
export async function runDataset(settings: RunSettings, expectedSha256: string): Promise<DatasetSnapshot> {
  await localRunFile(settings, 'dataset.json');
  return loadDataset(settings.logPath, expectedSha256);
}

/** The snapshots this process has read, by file, with the file's identity when read. */
const loaded = new Map<string, { stamp: string; sha256: string; snapshot: DatasetSnapshot }>();

/** The tasks of one training batch, one per group, in the seed's order. */
export function trainBatchTasks(snapshot: DatasetSnapshot, batch: number): { taskIndex: number; task: Task }[] {
  return batchTaskIndices(snapshot.trainPlan, batch).map((taskIndex) => ({ taskIndex, task: snapshot.train[taskIndex] }));
}

/** Every validation task once. */
export function valTasks(snapshot: DatasetSnapshot): { taskIndex: number; task: Task }[] {
  return batchTaskIndices(snapshot.valPlan, 0).map((taskIndex) => ({ taskIndex, task: snapshot.val[taskIndex] }));
}
