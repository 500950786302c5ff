// The sweep's plan and flags as plain data: children names, seeds and holds, the halving rule, and the one-line
// answers to bad flags (cli/sweep-command.ts, shared/sweep-plan.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateRunConfig } from '../../config/load';
import { sweepInput } from '../../cli/sweep-command';
import { halve, rankByEval, sweepChildren } from '../../shared/sweep-plan';

const base = validateRunConfig({
  runName: 'lr',
  learningRate: 1e-3,
  modelName: 'local/tiny-test',
  rendererName: 'role_colon',
  baseUrl: 'http://127.0.0.1:1',
  logPath: '/tmp/sweeps/lr',
  evalEvery: 2,
  datasetBuilder: { batchSize: 2, groupSize: 2, trainDataset: ['1', '2'], valDataset: ['3'], seed: 7 },
});

test('children: the grid x seeds, named by config and seed index, seeded, beside the base logPath, held after each milestone', () => {
  const input = sweepInput(base, { grid: ['learningRate=1e-4,1e-3', 'trainTemperature=0.5,1'], seeds: '2', earlyStop: '2,4', maxParallel: '3' }, 'q');
  const kids = sweepChildren(input);
  assert.equal(input.name, 'lr-sweep');
  assert.equal(input.maxParallel, 3);
  assert.equal(kids.length, 8);
  assert.deepEqual(kids.slice(0, 3).map((k) => [k.runName, k.assignment, k.seed]), [
    ['lr-sweep-c0-s0', { learningRate: 1e-4, trainTemperature: 0.5 }, 7],
    ['lr-sweep-c0-s1', { learningRate: 1e-4, trainTemperature: 0.5 }, 8],
    ['lr-sweep-c1-s0', { learningRate: 1e-4, trainTemperature: 1 }, 7],
  ]);
  assert.equal(kids[7]!.config.learningRate, 1e-3);
  assert.equal(kids[1]!.config.datasetBuilder.seed, 8);
  assert.equal(kids[1]!.config.logPath, '/tmp/sweeps/lr-sweep-c0-s1');
  assert.deepEqual(kids[1]!.config.pauseBeforeBatches, [3, 5]);
  assert.equal(sweepInput(base, { grid: ['learningRate=1e-4'] }, 'q').maxParallel, 1, 'default: every child at once');
  assert.equal(sweepChildren(sweepInput(base, { grid: ['learningRate=1e-4'] }, 'q'))[0]!.config.pauseBeforeBatches, undefined, 'no early stop, no hold');
});

test('halving keeps the better half (rounded up); no score is worst; ties go to the child started first', () => {
  assert.deepEqual(halve([{ index: 0, score: 0.1 }, { index: 1, score: 0.9 }, { index: 2, score: null }, { index: 3, score: 0.5 }]), { keep: [1, 3], stop: [0, 2] });
  assert.deepEqual(halve([{ index: 0, score: 0.5 }, { index: 1, score: 0.5 }, { index: 2, score: 0.2 }]), { keep: [0, 1], stop: [2] });
  assert.deepEqual(rankByEval([{ index: 0, score: null }, { index: 1, score: 0.2 }, { index: 2, score: 0.3 }]), [2, 1, 0]);
});

test('bad flags get one line naming the flag and value', () => {
  const err = (flags: Parameters<typeof sweepInput>[1]) => {
    try {
      sweepInput(base, flags, 'q');
    } catch (e) {
      return (e as Error).message;
    }
    return 'no error';
  };
  assert.equal(err({ grid: ['learningRat=1,2'] }), '--grid learningRat: unknown config key "learningRat" (did you mean learningRate?)');
  assert.equal(err({ grid: ['runName=a,b'] }), '--grid runName: the sweep sets runName itself');
  assert.equal(err({ grid: ['learningRate'] }), '--grid "learningRate": expected key=v1,v2,... (e.g. --grid learningRate=1e-4,3e-4)');
  assert.equal(err({ grid: [] }), '--grid key=v1,v2 is needed at least once');
  assert.equal(err({ grid: ['learningRate=1e-3'], seeds: 'two' }), '--seeds must be a whole number');
  assert.equal(err({ grid: ['learningRate=1e-3'], maxParallel: '0' }), '--max-parallel must be at least 1');
  assert.equal(err({ grid: ['learningRate=1e-3'], earlyStop: '4,2' }), '--early-stop steps must be at least 1 and increasing');
  assert.match(err({ grid: ['learningRate=1e-3'], earlyStop: '3' }), /^--early-stop 3: halving reads the eval after step 3, but lr-sweep-c0-s0 evaluates every 2 steps/);
  assert.match(err({ grid: ['learningRate=-1,1e-3'] }), /^sweep child lr-sweep-c0-s0 \(\{"learningRate":-1\}\): learningRate/);
});
