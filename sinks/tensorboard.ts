// TensorBoard event files: every metrics.jsonl row as one scalar per metric at its step, in
// <tensorboardDir>/<runName>/events.out.tfevents.*. A step already in the file is never written again, and a
// record torn by a crash is cut off before writing on, so each step is there once whatever crashed when.
import { existsSync, mkdirSync, readdirSync, readFileSync, truncateSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import protobuf from 'protobufjs';
import { appendSynced } from '../records/append-synced';
import { frameRecord, readRecords } from './tfrecord';

// tensorflow/core/util/event.proto and framework/summary.proto, the fields a scalar needs, encoded by hand so
// that a value of 0 is written too (a generic encoder drops it as the default, and TensorBoard then has no value).
function varint(n: number | bigint): number[] {
  let v = BigInt(n);
  const out: number[] = [];
  do {
    const b = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v > 0n ? b | 0x80 : b);
  } while (v > 0n);
  return out;
}
const field = (tag: number, bytes: Uint8Array) => Buffer.concat([Buffer.from([tag, ...varint(bytes.length)]), bytes]);

function encodeEvent(e: { wallTime: number; step?: number; fileVersion?: string; scalars?: [string, number][] }): Buffer {
  const wall = Buffer.alloc(9);
  wall[0] = 0x09; // 1: wall_time, double
  wall.writeDoubleLE(e.wallTime, 1);
  const parts = [wall];
  if (e.step !== undefined) parts.push(Buffer.from([0x10, ...varint(e.step)])); // 2: step, int64
  if (e.fileVersion !== undefined) parts.push(field(0x1a, Buffer.from(e.fileVersion))); // 3: file_version
  if (e.scalars) {
    const values = e.scalars.map(([tag, v]) => {
      const f = Buffer.alloc(5);
      f[0] = 0x15; // Value 2: simple_value, float
      f.writeFloatLE(v, 1);
      return field(0x0a, Buffer.concat([field(0x0a, Buffer.from(tag)), f])); // Summary 1: value; Value 1: tag
    });
    parts.push(field(0x2a, Buffer.concat(values))); // 5: summary
  }
  return Buffer.concat(parts);
}

/** The step of an event that has a summary, else null. */
function summaryStep(buf: Buffer): number | null {
  const r = protobuf.Reader.create(buf);
  let step = 0;
  let summary = false;
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t >>> 3 === 2) step = Number(r.int64());
    else {
      if (t >>> 3 === 5) summary = true;
      r.skipType(t & 7);
    }
  }
  return summary ? step : null;
}

export type StepRow = Record<string, unknown> & { step: number };

export function tensorboardRunDir(tensorboardDir: string, runName: string): string {
  return path.join(path.resolve(tensorboardDir), runName);
}

function eventFile(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const existing = readdirSync(dir).filter((f) => f.startsWith('events.out.tfevents.')).sort();
  if (existing[0]) return path.join(dir, existing[0]);
  const file = path.join(dir, `events.out.tfevents.${Math.floor(Date.now() / 1000)}.${os.hostname()}.agl`);
  appendSynced(file, frameRecord(encodeEvent({ wallTime: Date.now() / 1000, fileVersion: 'brain.Event:2' })));
  return file;
}

/** Steps already in the file; cuts off a torn last record. */
function stepsIn(file: string): Set<number> {
  const buf = readFileSync(file);
  const { records, end } = readRecords(buf);
  if (end < buf.length) truncateSync(file, end);
  const steps = new Set<number>();
  for (const r of records) {
    const step = summaryStep(r);
    if (step !== null) steps.add(step);
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
    const scalars = Object.entries(row).filter((kv): kv is [string, number] => kv[0] !== 'step' && typeof kv[1] === 'number');
    chunks.push(frameRecord(encodeEvent({ wallTime: Date.now() / 1000, step: row.step, scalars })));
    k.steps.add(row.step);
    written.push(row.step);
  }
  if (chunks.length) appendSynced(file, Buffer.concat(chunks));
  known.set(file, { size: statSync(file).size, steps: k.steps });
  return written;
}
