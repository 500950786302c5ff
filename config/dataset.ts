// The seed's AGLDatasetBuilder and AGLDataset: tasks from JSONL/CSV files or inline lists, the train/val split,
// and batching with Python's shuffle and the per-epoch drop-last rule, reproduced exactly.
import { readFileSync } from 'node:fs';
import { parse as parseCsv } from 'csv-parse/sync';
import type { DatasetBuilderConfig } from './run-config';
import { PythonRandom } from './python-random';

export type Task = unknown;

/** The order in which a dataset's tasks are visited, and how they form batches. */
export interface DatasetPlan {
  /** Flattened task indices across all epochs. */
  indices: number[];
  batchSize: number;
  groupSize: number;
}

/** AGLDataset.__init__: shuffled per epoch with drop-last, or the plain order repeated n_epochs times. */
export function planDataset(size: number, opts: { batchSize: number; shuffle: boolean; groupSize: number; seed: number; nEpochs: number }): DatasetPlan {
  const indices: number[] = [];
  if (opts.shuffle) {
    const rng = new PythonRandom(opts.seed);
    for (let e = 0; e < opts.nEpochs; e++) {
      const epoch = Array.from({ length: size }, (_, i) => i);
      rng.shuffle(epoch);
      indices.push(...epoch.slice(0, epoch.length - (epoch.length % opts.batchSize)));
    }
  } else {
    for (let e = 0; e < opts.nEpochs; e++) for (let i = 0; i < size; i++) indices.push(i);
  }
  return { indices, batchSize: opts.batchSize, groupSize: opts.groupSize };
}

/** len(AGLDataset) */
export function numBatches(plan: DatasetPlan): number {
  return plan.batchSize === 0 ? 0 : Math.floor(plan.indices.length / plan.batchSize);
}

/** AGLDataset.get_batch(i) as task indices, one per group. */
export function batchTaskIndices(plan: DatasetPlan, batch: number): number[] {
  const start = batch * plan.batchSize;
  const end = Math.min((batch + 1) * plan.batchSize, plan.indices.length);
  return plan.indices.slice(start, end);
}

/** Reads a task file the way the seed's pandas calls do (records of a CSV, objects of a JSONL). */
export function readTaskFile(file: string): Task[] {
  const text = readFileSync(file, 'utf8');
  if (file.endsWith('.jsonl')) {
    return text
      .split('\n')
      .map((line, i) => [line, i] as const)
      .filter(([line]) => line.trim() !== '')
      .map(([line, i]) => {
        try {
          return JSON.parse(line) as Task;
        } catch (err) {
          throw new Error(`${file}:${i + 1}: not valid JSON: ${(err as Error).message}`);
        }
      });
  }
  if (file.endsWith('.csv')) return csvRecords(text);
  throw new Error(`${file}: unsupported file type (use .jsonl or .csv)`);
}

/** CSV rows as objects, with pandas-like per-column typing: all-numeric columns become numbers, True/False booleans. */
function csvRecords(text: string): Task[] {
  const rows = parseCsv(text, { columns: true, skip_empty_lines: true }) as Record<string, string>[];
  if (rows.length === 0) return [];
  const columns = Object.keys(rows[0]!);
  const numeric = (v: string) => v.trim() !== '' && Number.isFinite(Number(v));
  const kind = new Map<string, 'number' | 'bool' | 'string'>();
  for (const c of columns) {
    const values = rows.map((r) => r[c] ?? '').filter((v) => v !== '');
    if (values.length > 0 && values.every(numeric)) kind.set(c, 'number');
    else if (values.length > 0 && values.every((v) => v === 'True' || v === 'False')) kind.set(c, 'bool');
    else kind.set(c, 'string');
  }
  return rows.map((r) => {
    const out: Record<string, unknown> = {};
    for (const c of columns) {
      const v = r[c] ?? '';
      const k = kind.get(c);
      out[c] = v === '' && k !== 'string' ? null : k === 'number' ? Number(v) : k === 'bool' ? v === 'True' : v;
    }
    return out;
  });
}

export interface BuiltDatasets {
  train: Task[];
  val: Task[];
  trainPlan: DatasetPlan;
  /** Validation: one batch of every task, one rollout each, never shuffled (as the seed). */
  valPlan: DatasetPlan;
  /** Set when the validation set was split off the training set. */
  splitNote?: string;
}

/** AGLDatasetBuilder.__call__ */
export function buildDatasets(cfg: DatasetBuilderConfig): BuiltDatasets {
  let train: Task[] = cfg.trainFile !== null ? readTaskFile(cfg.trainFile) : (cfg.trainDataset ?? []);
  let val: Task[];
  let splitNote: string | undefined;
  if (cfg.valFile !== null) val = readTaskFile(cfg.valFile);
  else if (cfg.valDataset !== null) val = cfg.valDataset;
  else {
    const order = Array.from({ length: train.length }, (_, i) => i);
    new PythonRandom(cfg.seed).shuffle(order);
    // int() in the seed truncates toward zero; the product is never negative here.
    const cut = Math.floor(train.length * cfg.trainValSplit);
    const trainIdx = order.slice(0, cut).sort((a, b) => a - b);
    const valIdx = order.slice(cut).sort((a, b) => a - b);
    const all = train;
    train = trainIdx.map((i) => all[i]);
    val = valIdx.map((i) => all[i]);
    splitNote = `no validation set given: split the training set into train (${train.length}) and validation (${val.length})`;
  }
  return {
    train,
    val,
    trainPlan: planDataset(train.length, cfg),
    valPlan: planDataset(val.length, { batchSize: val.length, shuffle: false, groupSize: 1, seed: 42, nEpochs: 1 }),
    splitNote,
  };
}
