// A run's records in the store (store/run-records.ts), as the activities use them: the store every worker reaches
// is their home, so an activity retried on another host finds what its earlier attempt wrote, whatever disk it
// ran on. A run directory written by a version that kept them on local disk (it has steps/) is imported once.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { RunRecord, RunRecordInput, RunRecordKind } from '../store/run-records';
import type { RunSettings } from '../shared/run-types';
import { runKey } from './rollout-batch';
import { cutTornTail, parsePyJsonLine, runPaths, writeFileAtomic } from '../records/run-files';
import { storeFor } from './services';
import { StoreHttpError } from '../store/client';

/** How a record is found again: (kind, step, key). */
export interface RecordId {
  kind: RunRecordKind;
  step?: number;
  key?: string;
}

/** The key of a trace event: its text (the same event logged twice is one record). */
export const traceKey = (line: string) => createHash('sha256').update(line).digest('hex').slice(0, 24);
/** The key of a checkpoint row: its name; a rolling row of the same step is another record. */
export const checkpointKey = (row: Record<string, unknown>) => `${row.rolling ? 'rolling:' : ''}${String(row.name)}`;

const imported = new Set<string>();

/** A store without the run records API (the Python `agl store`, an older agl-temporal store) says so plainly. */
function explained(settings: RunSettings) {
  return (err: unknown): never => {
    if (err instanceof StoreHttpError && err.status === 404 && /Not Found/.test(err.body)) {
      throw new Error(`the store at ${storeFor(settings).baseUrl} keeps no run records (${err.url} answered 404): a run's step records and rows need agl-temporal's store (gateway/main.ts, this version or later)`);
    }
    throw err;
  };
}

/** Writes records (each unless its key exists) and returns the record that stands for each. */
export async function putRecords(settings: RunSettings, records: RunRecordInput[]): Promise<RunRecord[]> {
  await importLocalRecords(settings);
  const out: RunRecord[] = [];
  for (let i = 0; i < records.length; i += 1000) out.push(...(await storeFor(settings).putRunRecords(runKey(settings), records.slice(i, i + 1000)).catch(explained(settings))));
  return out;
}

/** The record with this id, if any. */
export async function findRecord(settings: RunSettings, id: RecordId): Promise<RunRecord | undefined> {
  await importLocalRecords(settings);
  const [rec] = await storeFor(settings).runRecords(runKey(settings), { ...id, limit: 1 }).catch(explained(settings));
  return rec;
}

/** Every record of a kind (or of several) after `afterSeq`, by seq, one page at a time. */
export async function* recordsAfter(settings: RunSettings, kind: RunRecordKind | RunRecordKind[], afterSeq: number): AsyncGenerator<RunRecord[]> {
  await importLocalRecords(settings);
  let seq = afterSeq;
  const kinds = Array.isArray(kind) ? { kinds: kind } : { kind };
  for (;;) {
    const page = await storeFor(settings).runRecords(runKey(settings), { ...kinds, after_seq: seq, limit: 1000 }).catch(explained(settings));
    if (page.length === 0) return;
    yield page;
    seq = page[page.length - 1]!.seq;
    if (page.length < 1000) return;
  }
}

/**
 * A file the run starts with (config.json, dataset.json): the local copy under logPath, else the store's (written
 * there by prepareRun on whichever host ran it), copied into logPath. Undefined when neither has it. These are
 * kept per run name, as under logPath: the first run of a name writes them (prepareRun runs before the run has an
 * instance id).
 */
export async function localRunFile(settings: RunSettings, name: RunFileName): Promise<string | undefined> {
  const file = path.join(runPaths(settings.logPath).dir, name);
  if (existsSync(file)) return readFileSync(file, 'utf8');
  const [rec] = await storeFor(settings).runRecords(settings.runName, { kind: 'file', step: 0, key: name, limit: 1 });
  if (!rec) return undefined;
  writeFileAtomic(file, rec.body);
  return rec.body;
}

export type RunFileName = 'config.json' | 'dataset.json';

/** Keeps a file the run starts with in the store, so workers on other hosts find it (localRunFile). */
export async function keepRunFile(settings: RunSettings, name: RunFileName, text: string): Promise<void> {
  await storeFor(settings).putRunRecords(settings.runName, [{ kind: 'file', step: 0, key: name, body: text }]);
}

const IMPORTED_MARK = 'IMPORTED-TO-STORE';

/**
 * A run directory from before records lived in the store (it has steps/): its step records and rows go to the
 * store once, in file order, so the run resumes where it was and its exports continue its files. Idempotent (a
 * record already there stays), so two workers importing at once do no harm.
 */
export async function importLocalRecords(settings: RunSettings): Promise<void> {
  const paths = runPaths(settings.logPath);
  const id = `${runKey(settings)}\u0000${paths.dir}`;
  if (imported.has(id)) return;
  if (!existsSync(paths.steps) || existsSync(path.join(paths.steps, IMPORTED_MARK))) {
    imported.add(id);
    return;
  }
  const records: RunRecordInput[] = [];
  for (const f of readdirSync(paths.steps).filter((n) => /^\d+\.json$/.test(n)).sort()) {
    const text = readFileSync(path.join(paths.steps, f), 'utf8');
    const rec = JSON.parse(text) as { parentStatePath: string };
    records.push({ kind: 'step', step: Number(f.slice(0, -5)), key: rec.parentStatePath, body: text });
  }
  const lines = (file: string) => {
    if (!existsSync(file)) return [];
    cutTornTail(file);
    return readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '');
  };
  for (const l of lines(paths.metrics)) records.push({ kind: 'metrics', step: stepOf(l), body: l });
  for (const l of lines(paths.checkpoints)) {
    const row = JSON.parse(l) as Record<string, unknown>;
    records.push({ kind: 'checkpoint', step: Math.max(0, Number(row.batch) || 0), key: checkpointKey(row), body: l });
  }
  // Old trace events name no step; their key tells them apart.
  for (const l of lines(paths.trace)) records.push({ kind: 'trace', step: 0, key: traceKey(l), body: l });
  for (const l of lines(paths.configured)) records.push({ kind: 'configured', step: stepOf(l), body: l });
  const store = storeFor(settings);
  for (let i = 0; i < records.length; i += 1000) await store.putRunRecords(runKey(settings), records.slice(i, i + 1000));
  writeFileAtomic(path.join(paths.steps, IMPORTED_MARK), `${new Date().toISOString()} ${records.length} records to ${store.baseUrl} as run ${runKey(settings)}\n`);
  imported.add(id);
}

function stepOf(line: string): number {
  const step = (parsePyJsonLine(line) as { step?: unknown }).step;
  return Number.isInteger(step) && (step as number) >= 0 ? (step as number) : 0;
}
