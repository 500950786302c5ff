import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '../../config/errors';
import { loadRunConfigFile, validateRunConfig } from '../../config/load';

const minimal = {
  learningRate: 1e-5,
  datasetBuilder: { batchSize: 32, trainDataset: ['1', '2'] },
  modelName: 'Qwen/Qwen3-30B-A3B-Instruct-2507',
  rendererName: 'qwen3_instruct',
  logPath: 'logs/hello',
};

test("defaults are the seed's", () => {
  const cfg = validateRunConfig(minimal);
  assert.equal(cfg.computePostKl, false);
  assert.equal(cfg.loraRank, 32);
  assert.equal(cfg.llmProxyPort, 12306);
  assert.equal(cfg.klPenaltyCoef, 0);
  assert.equal(cfg.klDiscountFactor, 0);
  assert.equal(cfg.maxTokens, 2048);
  assert.equal(cfg.trainTemperature, 1);
  assert.equal(cfg.evalTemperature, 1);
  assert.equal(cfg.topK, -1);
  assert.equal(cfg.topP, 1);
  assert.equal(cfg.storeAddress, 'http://localhost:4747');
  assert.equal(cfg.adapterFromLlmProxy, false);
  assert.equal(cfg.adapterAgentMatch, null);
  assert.equal(cfg.llmProxyRetryAttempts, 0);
  assert.equal(cfg.concurrency, 16);
  assert.equal(cfg.lossFn, 'importance_sampling');
  assert.equal(cfg.numSubsteps, 1);
  assert.equal(cfg.baseUrl, null);
  assert.equal(cfg.enableTrace, false);
  assert.equal(cfg.removeConstantRewardGroups, false);
  assert.equal(cfg.evalEvery, 20);
  assert.equal(cfg.saveEvery, 20);
  assert.equal(cfg.loadCheckpointPath, null);
  const d = cfg.datasetBuilder;
  assert.deepEqual([d.nEpochs, d.trainValSplit, d.shuffle, d.groupSize, d.seed], [1, 0.7, true, 4, 42]);
});

test('logPath expands ~', () => {
  const cfg = validateRunConfig({ ...minimal, logPath: '~/runs/x' });
  assert.equal(cfg.logPath, path.join(os.homedir(), 'runs/x'));
  assert.equal(validateRunConfig({ ...minimal, logPath: 'logs/a' }).logPath, path.resolve('logs/a'), 'relative to the working directory, as the seed');
});

test('a wrong type, an out-of-range value and a misspelt key give three errors naming the three fields', () => {
  const file = path.join(__dirname, 'fixtures', 'three-mistakes.json');
  assert.throws(
    () => loadRunConfigFile(file),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.problems.length, 3, err.message);
      assert.match(err.problems.join('\n'), /^learningRate: .*expected number/m);
      assert.match(err.problems.join('\n'), /^datasetBuilder\.groupSize: .*>=1/m);
      assert.match(err.problems.join('\n'), /^lerningRate: unknown key/m);
      return true;
    },
  );
});

test('snake_case keys from a Python config are refused with a hint', () => {
  assert.throws(
    () => validateRunConfig({ ...minimal, save_every: 5 }),
    (err: unknown) => err instanceof ConfigError && /save_every: unknown key \(did you mean "saveEvery"\?\)/.test(err.message),
  );
});

test('missing data files are reported with their path', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cfg-'));
  const file = path.join(dir, 'run.json');
  writeFileSync(file, JSON.stringify({ ...minimal, datasetBuilder: { batchSize: 2, trainFile: 'nope.jsonl' } }));
  assert.throws(() => loadRunConfigFile(file), /datasetBuilder\.trainFile: file not found: .*nope\.jsonl/);
});

test('the seed refuses adapterAgentMatch together with adapterFromLlmProxy, and so do we', () => {
  assert.throws(
    () => validateRunConfig({ ...minimal, adapterFromLlmProxy: true, adapterAgentMatch: 'x' }),
    /adapterAgentMatch: adapterAgentMatch is not supported/,
  );
});

test('`npm run client -- validate` prints the three problems and exits 2', () => {
  const file = path.join(__dirname, 'fixtures', 'three-mistakes.json');
  const res = spawnSync(process.execPath, ['--import', 'tsx', path.join(__dirname, '../../client.ts'), 'validate', file], { encoding: 'utf8' });
  assert.equal(res.status, 2, res.stderr);
  const lines = res.stderr.split('\n').filter((l) => l.trim().startsWith('- '));
  assert.equal(lines.length, 3, res.stderr);
  for (const field of ['learningRate', 'datasetBuilder.groupSize', 'lerningRate']) assert.match(res.stderr, new RegExp(`- ${field.replace('.', '\\.')}:`));
});
