// TensorBoard event files: every metrics.jsonl row as one scalar per metric at its step, in
// <tensorboardDir>/<runName>/events.out.tfevents.*. A step already in the file is never written again, and a
// record torn by a crash is cut off before writing on, so each step is there once whatever crashed when.
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, truncateSync, writeSync, fsyncSync, closeSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import protobuf from 'protobufjs';
import { frameRecord, readRecords } from './tfrecord';

// tensorflow/core/util/event.proto and framework/summary.proto, the fields a scalar needs.
const root = protobuf.Root.fromJSON({
  nested: {
    Event: {
      fields: {
        wall_time: { type: 'double', id: 1 },
        step: { type: 'int64', id: 2 },
        file_version: { type: 'string', id: 3 },
        summary: { type: 'Summary', id: 5 },
      },
    },
    Summary: { fields: { value: { rule: 'repeated', type: 'Value', id: 1 } } },
    Value: { fields: { tag: { type: 'string', id: 1 }, simple_value: { type: 'float', id: 2 } } },
  },
});
const EventType = root.lookupType('Event');

export type StepRow = Record<string, unknown> & { step: number };

export function tensorboardRunDir(tensorboardDir: string, runName: string): string {
  return path.join(path.resolve(tensorboardDir), runName);
}

function eventFile(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const existing = readdirSync(dir).filter((f) => f.startsWith('events.out.tfevents.')).sort();
  if (existing[0]) return path.join(dir, existing[0]);
  const file = path.join(dir, `events.out.tfevents.${Math.floor(Date.now() / 1000)}.${os.hostname()}.agl`);
  const first = EventType.encode({ wall_time: Date.now() / 1000, file_version: 'brain.Event:2' }).finish();
  appendBytes(file, frameRecord(first));
  return file;
}

function appendBytes(file: string, bytes: Uint8Array): void {
  const fd = openSync(file, 'a');
  try {
    writeSync(fd, bytes);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Steps already in the file; cuts off a torn last record. */
function stepsIn(file: string): Set<number> {
  const buf = readFileSync(file);
  const { records, end } = readRecords(buf);
  if (end < buf.length) truncateSync(file, end);
  const steps = new Set<number>();
  for (const r of records) {
    const e = EventType.toObject(EventType.decode(r), { longs: Number }) as { step?: number; summary?: unknown };
    if (e.summary) steps.add(e.step ?? 0);
  }
  return steps;
}

// Per file: its size after our last write and the steps in it, so the file is read again only when someone
// else (another worker, a crash) changed it.
const known = new Map<string, { size: number; steps: Set<number> }>();

/** Appends the rows whose step is not in the run's event file yet. Returns the steps written. */
export function writeTensorboard(tensorboardDir: string, runName: string, rows: StepRow[]): number[] {
  const file = eventFile(tensorboardRunDir(tensorboardDir, runName));
  let k = known.get(file);
  if (!k || !existsSync(file) || statSync(file).size !== k.size) k = { size: 0, steps: stepsIn(file) };
  const written: number[] = [];
  const chunks: Buffer[] = [];
  for (const row of rows) {
    if (k.steps.has(row.step)) continue;
    const value = Object.entries(row)
      .filter(([tag, v]) => tag !== 'step' && typeof v === 'number')
      .map(([tag, v]) => ({ tag, simple_value: v as number }));
    chunks.push(frameRecord(EventType.encode({ wall_time: Date.now() / 1000, step: row.step, summary: { value } }).finish()));
    k.steps.add(row.step);
    written.push(row.step);
  }
  if (chunks.length) appendBytes(file, Buffer.concat(chunks));
  known.set(file, { size: statSync(file).size, steps: k.steps });
  return written;
}
