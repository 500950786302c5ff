// The files of a run (metrics.jsonl, checkpoints.jsonl, trace_events.jsonl, configured.jsonl) are exports of its
// records in the store, brought up to date incrementally: an export finds the last record its local file holds
// (from the file's last line, or from what this process appended last) and appends only the records after it, in
// the store's order. Any host that runs it ends with the same bytes, and the cost of step 10,000 is that of step
// 100. Callers hold the run directory lock (run-files.ts) so two processes on one host do not append the same
// records at once.
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import type { RunRecord, RunRecordKind } from '../store/run-records';
import type { RunSettings } from '../workflows/run-types';
import { appendSynced } from '../records/append-synced';
import { checkpointKey, findRecord, recordsAfter, traceKey, type RecordId } from './run-records';
import { cutTornTail, parsePyJsonLine, runPaths } from '../records/run-files';
import { runKey } from './rollout-batch';

interface Export {
  kind: RunRecordKind;
  file: string;
  /** How a line of the file names its record. */
  idOf(line: string): RecordId;
}

const rowOf = (line: string) => parsePyJsonLine(line) as Record<string, unknown>;

export function runExports(logPath: string): Export[] {
  const p = runPaths(logPath);
  return [
    { kind: 'trace', file: p.trace, idOf: (l) => ({ kind: 'trace', key: traceKey(l) }) },
    { kind: 'metrics', file: p.metrics, idOf: (l) => ({ kind: 'metrics', step: Number(rowOf(l).step), key: '' }) },
    { kind: 'checkpoint', file: p.checkpoints, idOf: (l) => ({ kind: 'checkpoint', key: checkpointKey(rowOf(l)) }) },
    { kind: 'configured', file: p.configured, idOf: (l) => ({ kind: 'configured', step: Number(rowOf(l).step), key: '' }) },
  ];
}

/** Records this process's exports read from the store (so a test can see an export read only what is new). */
export const exportCounts = { recordsRead: 0 };

/** The file's size; -1 when there is none. */
const sizeOf = (file: string) => (existsSync(file) ? statSync(file).size : -1);

// Per file: its size after this process's last export and the seq of its last record, so the file's tail is read
// (and its record looked up) again only when someone else changed it.
const cursors = new Map<string, { size: number; seq: number }>();
const cursorKey = (settings: RunSettings, ex: Export) => `${runKey(settings)}\u0000${ex.file}`;

/** The last complete line of a file (a torn one is cut off first), reading only its end. */
export function lastLine(file: string): string | null {
  if (!existsSync(file)) return null;
  cutTornTail(file);
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    for (let span = 64 * 1024; ; span *= 4) {
      const from = Math.max(0, size - span);
      const buf = Buffer.alloc(size - from);
      readSync(fd, buf, 0, buf.length, from);
      const text = buf.toString('utf8').replace(/\n+$/, '');
      const nl = text.lastIndexOf('\n');
      if (nl >= 0 || from === 0) return text.slice(nl + 1) || null;
    }
  } finally {
    closeSync(fd);
  }
}

/** The seq after which the store's records are missing from `file`; appends what a foreign file lacks. */
async function cursorOf(settings: RunSettings, ex: Export): Promise<number> {
  const known = cursors.get(cursorKey(settings, ex));
  if (known && sizeOf(ex.file) === known.size) return known.seq;
  const line = lastLine(ex.file);
  if (line === null) return 0;
  const id = ex.idOf(line);
  const rec = id.step === undefined || Number.isInteger(id.step) ? await findRecord(settings, id) : undefined;
  if (rec) return rec.seq;
  // The file's last row is no record of this run (a file from an earlier run of the same name, say): append the
  // records whose rows it lacks, as the files did before they were exports. Read in full once, then by cursor.
  const present = new Set(readFileSync(ex.file, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.stringify(ex.idOf(l))));
  let seq = 0;
  for await (const page of recordsAfter(settings, ex.kind, 0)) {
    const missing = page.filter((r) => !present.has(JSON.stringify(ex.idOf(r.body))));
    if (missing.length) appendSynced(ex.file, Buffer.from(missing.map((r) => `${r.body}\n`).join('')));
    seq = page[page.length - 1]!.seq;
  }
  return seq;
}

/**
 * Brings the run's files under `logPath` up to date with its records (the run's own logPath unless given: `client
 * export` writes anywhere). One request reads what every file lacks (from the oldest of their cursors); each file
 * gets its kind's records after its own. Returns the metrics records it appended, for the sinks.
 */
export async function exportRunFiles(settings: RunSettings, logPath = settings.logPath): Promise<RunRecord[]> {
  mkdirSync(path.resolve(logPath), { recursive: true });
  const exports = runExports(logPath);
  const seqs = new Map<RunRecordKind, number>();
  for (const ex of exports) seqs.set(ex.kind, await cursorOf(settings, ex));
  const newMetrics: RunRecord[] = [];
  let readThrough = 0;
  for await (const page of recordsAfter(settings, exports.map((e) => e.kind), Math.min(...seqs.values()))) {
    readThrough = page[page.length - 1]!.seq;
    exportCounts.recordsRead += page.length;
    for (const ex of exports) {
      const mine = page.filter((r) => r.kind === ex.kind && r.seq > seqs.get(ex.kind)!);
      if (mine.length === 0) continue;
      appendSynced(ex.file, Buffer.from(mine.map((r) => `${r.body}\n`).join('')));
      seqs.set(ex.kind, mine[mine.length - 1]!.seq);
      if (ex.kind === 'metrics') newMetrics.push(...mine);
    }
  }
  // Every file is up to date through the last record read, those with no record of their kind since included
  // (configured.jsonl of a run never configured): the next export starts there, not where their kind last was.
  for (const ex of exports) cursors.set(cursorKey(settings, ex), { size: sizeOf(ex.file), seq: Math.max(seqs.get(ex.kind)!, readThrough) });
  return newMetrics;
}
