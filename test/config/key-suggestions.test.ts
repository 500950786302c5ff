// `validate` names the key a typo most likely meant: camelCase typos and case slips as well as snake_case names.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateRunConfig } from '../../config/load';
import { ConfigError } from '../../config/errors';

function problems(raw: Record<string, unknown>): string[] {
  const base = { modelName: 'local/tiny-test', rendererName: 'role_colon', learningRate: 0.001, logPath: '/tmp/agl-x', datasetBuilder: { batchSize: 2, trainDataset: ['1'] } };
  try {
    validateRunConfig({ ...base, ...raw });
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.problems;
  }
  assert.fail('the config was accepted');
}

test('a transposition, a missing letter and a case slip get the right name', () => {
  assert.deepEqual(problems({ loraRnak: 8, maxToken: 3, evalevery: 2 }), [
    'loraRnak: unknown key (did you mean "loraRank"?)',
    'maxToken: unknown key (did you mean "maxTokens"?)',
    'evalevery: unknown key (did you mean "evalEvery"?)',
  ]);
});

test('a nested key is matched against the keys of its own object', () => {
  assert.deepEqual(problems({ datasetBuilder: { batchSize: 2, groupsize: 4, trainDataset: ['1'] } }), ['datasetBuilder.groupsize: unknown key (did you mean "groupSize"?)']);
});

test('snake_case still gets its camelCase, and a key like nothing known gets no guess', () => {
  assert.deepEqual(problems({ lora_rank: 8, wandb_projct: 'x', colour: 'blue' }), [
    'lora_rank: unknown key (did you mean "loraRank"?)',
    'wandb_projct: unknown key (did you mean "wandbProject"?)',
    'colour: unknown key',
  ]);
});
