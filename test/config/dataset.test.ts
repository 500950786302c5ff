import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { batchTaskIndices, buildDatasets, numBatches, planDataset, readTaskFile } from '../../config/dataset';
import { DatasetBuilderSchema } from '../../config/run-config';
import { PythonRandom } from '../../config/python-random';

/** Runs the seed's own AGLDataset index logic in the real CPython and returns its indices. */
function pythonIndices(size: number, batchSize: number, shuffle: boolean, seed: number, nEpochs: number): number[] {
  const code = `
import json, random
size, bs, shuffle, seed, n_epochs = ${size}, ${batchSize}, ${shuffle ? 'True' : 'False'}, ${seed}, ${nEpochs}
indices = []
if shuffle:
    rs = random.Random(seed)
    for _ in range(n_epochs):
        ix = list(range(size)); rs.shuffle(ix)
        indices.extend(ix[: len(ix) - len(ix) % bs])
else:
    for _ in range(n_epochs):
        indices.extend(range(size))
print(json.dumps(indices))`;
  return JSON.parse(execFileSync('python3', ['-c', code], { encoding: 'utf8' })) as number[];
}

test("PythonRandom.shuffle matches CPython's random.Random(seed).shuffle", () => {
  for (const seed of [0, 1, 17, 42, 2 ** 33 + 7]) {
    const ours = Array.from({ length: 300 }, (_, i) => i);
    new PythonRandom(seed).shuffle(ours);
    const theirs = JSON.parse(
      execFileSync('python3', ['-c', `import random,json;a=list(range(300));random.Random(${seed}).shuffle(a);print(json.dumps(a))`], { encoding: 'utf8' }),
    );
    assert.deepEqual(ours, theirs, `seed ${seed}`);
  }
});

test('batch plans match the seed: shuffle with per-epoch drop-last, or plain repetition', () => {
  for (const [size, bs, shuffle, seed, epochs] of [
    [1000, 32, true, 42, 1],
    [160, 16, true, 17, 10],
    [10, 4, true, 42, 3],
    [10, 4, false, 42, 3],
  ] as const) {
    const plan = planDataset(size, { batchSize: bs, shuffle, groupSize: 4, seed, nEpochs: epochs });
    assert.deepEqual(plan.indices, pythonIndices(size, bs, shuffle, seed, epochs), `${size}/${bs}/${shuffle}`);
  }
  const hello = planDataset(1000, { batchSize: 32, shuffle: true, groupSize: 4, seed: 42, nEpochs: 1 });
  assert.equal(numBatches(hello), 31, 'hello algo: 1000 tasks at 32 per batch → 31 batches');
  const noShuffle = planDataset(10, { batchSize: 4, shuffle: false, groupSize: 4, seed: 42, nEpochs: 3 });
  assert.equal(numBatches(noShuffle), 7, '30 indices without drop-last → 7 full batches');
  assert.deepEqual(batchTaskIndices(noShuffle, 2), [8, 9, 0, 1], 'without shuffle a batch crosses the epoch boundary');
});

test('without a validation set the training list is split as the seed does', () => {
  const cfg = DatasetBuilderSchema.parse({ batchSize: 2, trainDataset: Array.from({ length: 10 }, (_, i) => `t${i}`) });
  const built = buildDatasets(cfg);
  const expected = JSON.parse(
    execFileSync(
      'python3',
      ['-c', 'import random,json;ix=list(range(10));random.Random(42).shuffle(ix);print(json.dumps([sorted(ix[:7]),sorted(ix[7:])]))'],
      { encoding: 'utf8' },
    ),
  ) as [number[], number[]];
  assert.deepEqual(built.train, expected[0].map((i) => `t${i}`));
  assert.deepEqual(built.val, expected[1].map((i) => `t${i}`));
  assert.deepEqual(built.valPlan.indices, [0, 1, 2]);
  assert.equal(numBatches(built.valPlan), 1);
  assert.equal(built.valPlan.groupSize, 1);
});

test('task files: JSONL objects and CSV records with typed columns', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ds-'));
  writeFileSync(path.join(dir, 'a.jsonl'), '{"q":"1+1","a":2}\n\n"plain"\n');
  assert.deepEqual(readTaskFile(path.join(dir, 'a.jsonl')), [{ q: '1+1', a: 2 }, 'plain']);
  writeFileSync(path.join(dir, 'b.csv'), 'answer,category,n,flag\nDog,animal,3,True\n"Cat, big",animal,4.5,False\n');
  assert.deepEqual(readTaskFile(path.join(dir, 'b.csv')), [
    { answer: 'Dog', category: 'animal', n: 3, flag: true },
    { answer: 'Cat, big', category: 'animal', n: 4.5, flag: false },
  ]);
  writeFileSync(path.join(dir, 'bad.jsonl'), '{"ok":1}\n{nope\n');
  assert.throws(() => readTaskFile(path.join(dir, 'bad.jsonl')), /bad\.jsonl:2: not valid JSON/);
  assert.throws(() => readTaskFile(path.join(dir, 'x.parquet')), /ENOENT|unsupported/);
});
