// The files a run writes under its logPath, as the cookbook does: metrics.jsonl (one row per step),
// checkpoints.jsonl (one row per checkpoint name), config.json, dataset.json (our snapshot of the tasks) and
// trace_events.jsonl. Writes are idempotent, so a retried activity never duplicates a row.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync, openSync, fsyncSync, closeSync, truncateSync } from 'node:fs';
import path from 'node:path';
import { lock } from 'proper-lockfile';
import { pyJsonDumps } from '../chat/py-json';
import { appendSynced } from '../sinks/append-synced';

export interface RunPaths {
  dir: string;
  metrics: string;
  checkpoints: string;
  config: string;
  dataset: string;
  trace: string;
  /** Committed train steps, one file each: the exactly-once record of trainStep. */
  steps: string;
}

export function runPaths(logPath: string): RunPaths {
  const dir = path.resolve(logPath);
  return {
    dir,
    metrics: path.join(dir, 'metrics.jsonl'),
    checkpoints: path.join(dir, 'checkpoints.jsonl'),
    config: path.join(dir, 'config.json'),
    dataset: path.join(dir, 'dataset.json'),
    trace: path.join(dir, 'trace_events.jsonl'),
    steps: path.join(dir, 'steps'),
  };
}

/** Parses one JSONL line written by Python's json.dumps, which may hold bare NaN/Infinity. */
export function parsePyJsonLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    // Python writes non-finite floats as bare words; rows here hold no strings that contain them.
    const fixed = line.replace(/-?Infinity\b|\bNaN\b/g, (m) => `"__${m}__"`);
    return JSON.parse(fixed, (_k, v) => (v === '__NaN__' ? NaN : v === '__Infinity__' ? Infinity : v === '__-Infinity__' ? -Infinity : v));
  }
}

/** Rows of a JSONL file; a torn last line (a crash mid-write) is skipped. */
export function readJsonl(file: string): Record<string, unknown>[] {
  if (!existsSync(file)) return [];
  const rows: Record<string, unknown>[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    try {
      rows.push(parsePyJsonLine(line) as Record<string, unknown>);
    } catch {
      /* torn line */
    }
  }
  return rows;
}

/**
 * Appends `row` as one line and syncs it to disk. A torn last line (a crash mid-write, or a disk that filled up
 * under an older version) is cut off first: it was never acknowledged, and every JSONL reader (jq, Python's json)
 * stops at it. The append itself is all or nothing (appendSynced), so the file is valid JSONL after any crash.
 */
export function appendJsonl(file: string, row: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true });
  cutTornTail(file);
  appendSynced(file, Buffer.from(`${pyJsonDumps(row)}\n`));
}

/** Truncates a file that does not end in a newline to its last complete line. */
export function cutTornTail(file: string): void {
  if (!existsSync(file)) return;
  const bytes = readFileSync(file);
  if (bytes.length === 0 || bytes[bytes.length - 1] === 0x0a) return;
  truncateSync(file, bytes.lastIndexOf(0x0a) + 1);
}

/** Appends `row` unless a row with the same value of `key` is already there. Returns whether it wrote. */
export function appendJsonlOnce(file: string, key: string, row: Record<string, unknown>): boolean {
  if (readJsonl(file).some((r) => r[key] === row[key])) return false;
  appendJsonl(file, row);
  return true;
}

// A lock held by a process killed with it is taken over once it has not been refreshed for this long.
const LOCK_STALE_MS = 5_000;

/**
 * Runs `fn` while holding the run directory's write lock, which works across processes and machines sharing the
 * directory. Temporal may run a retry on another worker while a stale attempt is still alive; without the lock
 * both could find a row missing and both append it.
 */
export async function withRunDirLock<T>(dir: string, fn: () => T): Promise<T> {
  mkdirSync(dir, { recursive: true });
  const release = await lock(dir, {
    lockfilePath: path.join(dir, '.write.lock'),
    realpath: false,
    stale: LOCK_STALE_MS,
    update: LOCK_STALE_MS / 5,
    // Long enough to outwait a lock left by a killed process.
    retries: { retries: 60, factor: 1.5, minTimeout: 20, maxTimeout: 500 },
    // The default throws from a timer, which would crash the worker; the write it guards is milliseconds long.
    onCompromised: (e) => console.warn(`run directory lock ${dir} compromised: ${e.message}`),
  });
  try {
    return fn();
  } finally {
    await release().catch(() => undefined);
  }
}

/** Writes a whole file atomically (temp file + rename), so readers never see half of it. */
export function writeFileAtomic(file: string, content: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, content);
  const fd = openSync(tmp, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}
