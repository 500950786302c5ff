// The files a run writes under its logPath, as the cookbook does: metrics.jsonl (one row per step),
// checkpoints.jsonl (one row per checkpoint name), config.json, dataset.json (our snapshot of the tasks) and
// trace_events.jsonl. Writes are idempotent, so a retried activity never duplicates a row.
import { existsSync, fstatSync, mkdirSync, readFileSync, readSync, renameSync, writeFileSync, openSync, fsyncSync, closeSync, truncateSync } from 'node:fs';
import path from 'node:path';
import { pyJsonDumps } from '../python/json-dumps';
import { appendSynced } from './append-synced';
import { withDirLock } from './dir-lock';

export interface RunPaths {
  dir: string;
  metrics: string;
  checkpoints: string;
  config: string;
  dataset: string;
  trace: string;
  /** configured.jsonl: the settings `configure` changed, per step (sinks/configured.ts). */
  configured: string;
  /** Committed train steps of older versions, one file each (now in the store; imported by run-records.ts). */
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
    configured: path.join(dir, 'configured.jsonl'),
    steps: path.join(dir, 'steps'),
  };
}

/**
 * A record row as JSON, in the format of every file and record body of a run: spaced as Python's json.dumps spaces
 * it (", " and ": ", ASCII only, NaN and Infinity bare), numbers with JSON.stringify's digits (0.00001).
 */
export function recordJson(row: unknown): string {
  return pyJsonDumps(row, { numbers: 'javascript' });
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

/**
 * Each row of a JSONL file in order, read 1 MiB at a time, so a long run's file is never held whole; a torn line
 * (a crash mid-write) is skipped.
 */
export function forEachJsonlRow(file: string, visit: (row: Record<string, unknown>) => void): void {
  if (!existsSync(file)) return;
  const fd = openSync(file, 'r');
  const chunk = Buffer.alloc(1 << 20);
  let carry = Buffer.alloc(0);
  const take = (line: string) => {
    if (line.trim() === '') return;
    try {
      visit(parsePyJsonLine(line) as Record<string, unknown>);
    } catch {
      /* torn line */
    }
  };
  try {
    for (let n; (n = readSync(fd, chunk, 0, chunk.length, null)) > 0; ) {
      const buf = Buffer.concat([carry, chunk.subarray(0, n)]);
      let from = 0;
      for (let nl; (nl = buf.indexOf(0x0a, from)) >= 0; from = nl + 1) take(buf.toString('utf8', from, nl));
      carry = Buffer.from(buf.subarray(from)); // a copy: `chunk` is read into again
    }
    take(carry.toString('utf8'));
  } finally {
    closeSync(fd);
  }
}

/** Rows of a JSONL file; a torn last line (a crash mid-write) is skipped. */
export function readJsonl(file: string): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  forEachJsonlRow(file, (row) => rows.push(row));
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
  appendSynced(file, Buffer.from(`${recordJson(row)}\n`));
}

/** Truncates a file that does not end in a newline to its last complete line, reading only its end. */
export function cutTornTail(file: string): void {
  if (!existsSync(file)) return;
  const fd = openSync(file, 'r');
  let cut = -1;
  try {
    const size = fstatSync(fd).size;
    const last = Buffer.alloc(1);
    if (size === 0 || (readSync(fd, last, 0, 1, size - 1), last[0] === 0x0a)) return;
    for (let end = size; end > 0 && cut < 0; ) {
      const from = Math.max(0, end - 64 * 1024);
      const buf = Buffer.alloc(end - from);
      readSync(fd, buf, 0, buf.length, from);
      const nl = buf.lastIndexOf(0x0a);
      if (nl >= 0) cut = from + nl + 1;
      else if (from === 0) cut = 0;
      end = from;
    }
  } finally {
    closeSync(fd);
  }
  truncateSync(file, cut);
}

/** Appends `row` unless a row with the same value of `key` is already there. Returns whether it wrote. */
export function appendJsonlOnce(file: string, key: string, row: Record<string, unknown>): boolean {
  if (readJsonl(file).some((r) => r[key] === row[key])) return false;
  appendJsonl(file, row);
  return true;
}

/**
 * Runs `fn` while holding the run directory's write lock (dir-lock.ts: held while its holder lives). Temporal may
 * run a retry in another worker process on this host while a stale attempt is still alive; without the lock both
 * could find the same records missing from a file and both append them.
 */
export function withRunDirLock<T>(dir: string, fn: () => T | Promise<T>): Promise<T> {
  return withDirLock(dir, fn);
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
