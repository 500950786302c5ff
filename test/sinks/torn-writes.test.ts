// A crash in the middle of writing a TensorBoard event or a W&B record leaves a torn tail: the next writer cuts it
// off and writes the missing steps, each once (read back with our readers here; the real-run test uses the
// official ones).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, statSync, truncateSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readRecords } from '../../sinks/tfrecord';
import { tensorboardRunDir, writeTensorboard } from '../../sinks/tensorboard';
import { unframe } from '../../sinks/wandb-log-format';
import { decodeRecord } from '../../sinks/wandb-records';
import { appendWandbSteps, wandbLogFile, type WandbRunSpec } from '../../sinks/wandb-local-run';

const rows = (n: number) => Array.from({ length: n }, (_, step) => ({ step, 'env/all/reward/total': step / n, 'optim/lr': 0.003, zero: 0 }));

test('TensorBoard: a torn last event is cut off and its step written again, once', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agl-tb-'));
  assert.deepEqual(writeTensorboard(dir, 'r', rows(3)), [0, 1, 2]);
  const file = path.join(tensorboardRunDir(dir, 'r'), readdirSync(tensorboardRunDir(dir, 'r'))[0]!);
  truncateSync(file, statSync(file).size - 5); // step 2's event torn
  assert.deepEqual(writeTensorboard(dir, 'r', rows(5)), [2, 3, 4]);
  assert.deepEqual(writeTensorboard(dir, 'r', rows(5)), [], 'nothing twice');
  const { records, end } = readRecords(readFileSync(file));
  assert.equal(end, statSync(file).size);
  assert.equal(records.length, 1 + 5, 'the file version event and one event per step');
});

test('W&B: records across 32 KiB blocks read back whole; a torn tail is cut off; steps are never repeated', () => {
  const spec: WandbRunSpec = { root: mkdtempSync(path.join(os.tmpdir(), 'agl-wb-')), id: 'abc', project: 'p', entity: null, name: 'n', config: { a: 1 }, offline: true };
  assert.equal(appendWandbSteps(spec, rows(600)).length, 600);
  const file = wandbLogFile(spec);
  assert.ok(statSync(file).size > 2 * 32768, 'the log spans several blocks');
  appendFileSync(file, Buffer.from([1, 2, 3, 4, 5, 6, 7, 8, 9])); // a record header and a few bytes: a torn write
  assert.deepEqual(appendWandbSteps(spec, rows(602)), [600, 601]);
  assert.deepEqual(appendWandbSteps(spec, rows(602)), []);
  const { records, end } = unframe(readFileSync(file));
  assert.equal(end, statSync(file).size, 'no torn bytes left');
  const decoded = records.map(decodeRecord);
  const steps = decoded.filter((r) => r.history).map((r) => r.history!.step?.num ?? 0);
  assert.deepEqual(steps, Array.from({ length: 602 }, (_, i) => i));
  const zero = decoded.find((r) => r.history)!.history!.item.find((i) => i.key === 'zero');
  assert.equal(zero?.value_json, '0', 'a value of 0 is written');
  assert.deepEqual(decoded.map((r) => r.num), decoded.map((_, i) => i + 1), 'record numbers go on after the cut');
});

test('a file that is no W&B log is refused with the reason', () => {
  assert.throws(() => unframe(Buffer.from('not a log')), /not a W&B transaction log/);
});
