import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { localTrainerNotes } from '../../cli/config-check';
import { ConfigError } from '../../config/errors';
import { loadRunConfigFile, validateRunConfig } from '../../config/load';
import { ASYNC_DEFAULTS } from '../../config/run-config';

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
      assert.match(err.problems.join('\n'), /^learningRate: must be a number/m);
      assert.match(err.problems.join('\n'), /^datasetBuilder\.groupSize: must be at least 1/m);
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

test('validate says that the local trainer trains all weights whatever loraRank says, and only for its models', () => {
  assert.deepEqual(localTrainerNotes({ modelName: 'local/tiny', loraRank: 32 }), [
    'loraRank 32: the local trainer trains all weights of local/tiny; loraRank is recorded, not applied',
  ]);
  assert.deepEqual(localTrainerNotes({ modelName: 'Qwen/Qwen3-8B', loraRank: 32 }), []);
});

/** The problems validateRunConfig reports for `over` (on top of the minimal config), one line each. */
function problemsOf(over: Record<string, unknown>): string[] {
  try {
    validateRunConfig({ ...minimal, ...over });
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems;
  }
  return [];
}

const asyncOn = { maxStepsOffPolicy: 2, groupsPerBatch: 8 };

test('lossFn takes every RL loss of the Tinker API the local trainer has; others are refused', () => {
  for (const lossFn of ['importance_sampling', 'ppo', 'cispo', 'dro'] as const) assert.equal(validateRunConfig({ ...minimal, lossFn }).lossFn, lossFn);
  for (const lossFn of ['cross_entropy', 'gspo', 'PPO']) assert.match(problemsOf({ lossFn }).join('\n'), /^lossFn: must be one of "importance_sampling", "ppo", "cispo", "dro", not the text /m, lossFn);
});

test('lossFn defaults to importance_sampling, and to ppo (a clipped loss) when async is set; explicit wins', () => {
  assert.equal(validateRunConfig(minimal).lossFn, 'importance_sampling');
  assert.equal(validateRunConfig({ ...minimal, async: null }).lossFn, 'importance_sampling');
  assert.equal(validateRunConfig({ ...minimal, async: asyncOn }).lossFn, 'ppo');
  assert.equal(validateRunConfig({ ...minimal, async: asyncOn, lossFn: 'importance_sampling' }).lossFn, 'importance_sampling');
  assert.equal(validateRunConfig({ ...minimal, async: asyncOn, lossFn: 'cispo' }).lossFn, 'cispo');
  // cispo's default clip is the cookbook's one-sided one (PR #763), sent as loss_fn_config; a given one is kept.
  assert.deepEqual(validateRunConfig({ ...minimal, lossFn: 'cispo' }).lossFnConfig, { clip_low_threshold: 0, clip_high_threshold: 4 });
  assert.deepEqual(validateRunConfig({ ...minimal, lossFn: 'cispo', lossFnConfig: { clip_high_threshold: 5 } }).lossFnConfig, { clip_high_threshold: 5 });
  assert.equal(validateRunConfig({ ...minimal, lossFn: 'ppo' }).lossFnConfig, null);
});

test('async: null by default; the cookbook\'s AsyncConfig fields, checked', () => {
  assert.equal(validateRunConfig(minimal).async, null);
  assert.deepEqual(validateRunConfig({ ...minimal, async: { maxStepsOffPolicy: 0, groupsPerBatch: 1 } }).async, { maxStepsOffPolicy: 0, groupsPerBatch: 1, pipelineDepth: 0, staleRule: 'pace' });
  assert.deepEqual(problemsOf({ async: { maxStepsOffPolicy: 1, groupsPerBatch: 4, pipelineDepth: 2 } }), [
    'async.pipelineDepth: must not be above maxStepsOffPolicy (1): no group may be more steps behind than that',
  ]);
  assert.match(problemsOf({ async: { maxStepsOffPolicy: 1, groupsPerBatch: 4, staleRule: 'drop' } }).join('\n'), /^async\.staleRule: must be one of "pace", "resample", "late", not the text "drop"/m);
  assert.deepEqual(problemsOf({ async: { maxStepsOffPolicy: 2, groupsPerBatch: 4, pipelineDepth: 1, staleRule: 'late' } }), [
    "async.pipelineDepth: applies to staleRule 'pace' only; with 'late' sampling runs maxStepsOffPolicy steps ahead",
  ]);
  assert.equal(validateRunConfig({ ...minimal, async: { maxStepsOffPolicy: 2, groupsPerBatch: 4, staleRule: 'late' } }).async!.staleRule, 'late');
  assert.deepEqual(problemsOf({ async: { maxStepsOffPolicy: -1, groupsPerBatch: 0 } }), [
    'async.maxStepsOffPolicy: must be at least 0, not -1',
    'async.groupsPerBatch: must be at least 1, not 0',
  ]);
  assert.match(problemsOf({ async: { maxStepsOffPolicy: 1.5, groupsPerBatch: 4 } }).join('\n'), /^async\.maxStepsOffPolicy: must be a whole number, not 1\.5/m);
  assert.match(problemsOf({ async: true }).join('\n'), /^async: /m);
  assert.deepEqual(problemsOf({ async: { ...asyncOn, lossFn: 'ppo' } }), ['async.lossFn: unknown key (did you mean "lossFn (at the top level)"?)']);
});

test('"async": {} is a valid async config: the defaults filled in when validated, so the workflow gets numbers', () => {
  assert.deepEqual(validateRunConfig({ ...minimal, async: {} }).async, { maxStepsOffPolicy: 6, groupsPerBatch: 32, pipelineDepth: 2, staleRule: 'pace' });
  assert.deepEqual(ASYNC_DEFAULTS, { maxStepsOffPolicy: 6, pipelineDepth: 2 });
  // pipelineDepth's default never exceeds K; given values are kept; 'late' and 'resample' take no pipelineDepth.
  assert.equal(validateRunConfig({ ...minimal, async: { maxStepsOffPolicy: 1 } }).async!.pipelineDepth, 1);
  assert.equal(validateRunConfig({ ...minimal, async: { pipelineDepth: null } }).async!.pipelineDepth, 2);
  assert.deepEqual(validateRunConfig({ ...minimal, async: { maxStepsOffPolicy: 3, pipelineDepth: 3, groupsPerBatch: 8 } }).async, { maxStepsOffPolicy: 3, groupsPerBatch: 8, pipelineDepth: 3, staleRule: 'pace' });
  assert.deepEqual(validateRunConfig({ ...minimal, async: { staleRule: 'late' } }).async, { maxStepsOffPolicy: 6, groupsPerBatch: 32, pipelineDepth: null, staleRule: 'late' });
  assert.deepEqual(problemsOf({ async: { maxStepsOffPolicy: 1, pipelineDepth: 2 } }), [
    'async.pipelineDepth: must not be above maxStepsOffPolicy (1): no group may be more steps behind than that',
  ]);
});

test('async needs a rollout timeout, so a rollout that never finishes cannot stall the run', () => {
  assert.equal(validateRunConfig({ ...minimal, async: asyncOn }).rolloutTimeoutSeconds, 600);
  assert.deepEqual(problemsOf({ async: asyncOn, rolloutTimeoutSeconds: null }), [
    'rolloutTimeoutSeconds: an async run needs a rollout timeout, so that a rollout that never finishes cannot stall it',
  ]);
  assert.equal(validateRunConfig({ ...minimal, rolloutTimeoutSeconds: null }).rolloutTimeoutSeconds, null, 'a synchronous run may go without');
});

test('lossFnConfig: null by default; finite numbers under the keys the chosen loss reads', () => {
  assert.equal(validateRunConfig(minimal).lossFnConfig, null);
  const ok: [string, Record<string, number>][] = [
    ['ppo', { clip_low_threshold: 0.7, clip_high_threshold: 1.3 }],
    ['cispo', { clip_high_threshold: 5 }],
    ['dro', { beta: 0.1 }],
    ['importance_sampling', {}],
  ];
  for (const [lossFn, lossFnConfig] of ok) assert.deepEqual(validateRunConfig({ ...minimal, lossFn, lossFnConfig }).lossFnConfig, lossFnConfig);
  assert.deepEqual(validateRunConfig({ ...minimal, async: asyncOn, lossFnConfig: { clip_low_threshold: 0.9 } }).lossFnConfig, { clip_low_threshold: 0.9 }, 'checked against the async default, ppo');
  assert.deepEqual(problemsOf({ lossFn: 'dro', lossFnConfig: { clip_low_threshold: 0.9, beta: 0.1 } }), [
    'lossFnConfig.clip_low_threshold: not a setting of dro; it takes beta',
  ]);
  assert.deepEqual(problemsOf({ lossFn: 'ppo', lossFnConfig: { beta: 0.1, clipHighThreshold: 2 } }), [
    'lossFnConfig.beta: not a setting of ppo; it takes clip_low_threshold, clip_high_threshold',
    'lossFnConfig.clipHighThreshold: not a setting of ppo; it takes clip_low_threshold, clip_high_threshold',
  ]);
  assert.deepEqual(problemsOf({ lossFnConfig: { beta: 0.1 } }), ['lossFnConfig.beta: importance_sampling takes no lossFnConfig']);
  assert.deepEqual(problemsOf({ lossFn: 'cispo', lossFnConfig: { clip_low_threshold: 2, clip_high_threshold: 1 } }), [
    'lossFnConfig.clip_low_threshold: must not be above clip_high_threshold (1)',
  ]);
  assert.match(problemsOf({ lossFn: 'dro', lossFnConfig: { beta: '0.1' } }).join('\n'), /^lossFnConfig\.beta: must be a number/m);
  assert.match(problemsOf({ lossFn: 'dro', lossFnConfig: [0.1] }).join('\n'), /^lossFnConfig: must be an object/m);
});

test('misspelt and cookbook-named keys of the new settings get a suggestion', () => {
  assert.deepEqual(problemsOf({ loss_fn: 'ppo', loss_fn_config: {}, async_config: asyncOn }), [
    'loss_fn: unknown key (did you mean "lossFn"?)',
    'loss_fn_config: unknown key (did you mean "lossFnConfig"?)',
    'async_config: unknown key (did you mean "async"?)',
  ]);
  assert.deepEqual(problemsOf({ asyncConfig: asyncOn }), ['asyncConfig: unknown key (did you mean "async"?)']);
  assert.deepEqual(problemsOf({ async: { max_steps_off_policy: 1, groups_per_batch: 4 } }), [
    'async.max_steps_off_policy: unknown key (did you mean "maxStepsOffPolicy"?)',
    'async.groups_per_batch: unknown key (did you mean "groupsPerBatch"?)',
  ]);
});
