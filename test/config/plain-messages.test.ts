// Run configs as a user writes them: `rendererName` may be left out (the model's recommended renderer, as the
// cookbook's get_recommended_renderer_name gives it and docs/models.md lists it), and every problem is one plain
// line naming its field, never zod's own wording ("Invalid input: expected string, received undefined").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { recommendedRenderer } from '../../chat/models';
import { ConfigError } from '../../config/errors';
import { validateRunConfig } from '../../config/load';
import { parseRunChanges } from '../../config/run-changes';
import { client } from '../helpers/commands';

const minimal = { learningRate: 1e-5, datasetBuilder: { batchSize: 1, trainDataset: ['a', 'b'] }, logPath: 'logs/plain' };

/** zod's own phrases, which no message a user sees may hold. */
const ZOD = /Invalid input|Invalid option|Invalid URL|Invalid string|Too small|Too big|expected \w+, received|expected \w+ to (be|have)|Unrecognized key|received undefined|>=|<=/;

function problemsOf(raw: unknown): string[] {
  try {
    validateRunConfig(raw);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

test('a config without rendererName gets the model\'s recommended renderer', () => {
  for (const modelName of ['Qwen/Qwen3-8B', 'meta-llama/Llama-3.1-8B-Instruct', 'Qwen/Qwen3-30B-A3B-Instruct-2507', 'local/tiny-hello']) {
    assert.equal(validateRunConfig({ ...minimal, modelName }).rendererName, recommendedRenderer(modelName), modelName);
  }
  assert.equal(validateRunConfig({ ...minimal, modelName: 'Qwen/Qwen3-8B' }).rendererName, 'qwen3');
  assert.equal(validateRunConfig({ ...minimal, modelName: 'Qwen/Qwen3-8B', rendererName: 'qwen3_disable_thinking' }).rendererName, 'qwen3_disable_thinking', 'one given is kept');
  // A model the registry does not know has no recommended renderer: one line saying to name one.
  const [line, ...more] = problemsOf({ ...minimal, modelName: 'acme/Model-7B' });
  assert.deepEqual(more, []);
  assert.match(line!, /^rendererName: not given, and "acme\/Model-7B" is not a model of tinker-cookbook's registry, so it has no recommended renderer: name one/);
});

test('client validate accepts a config without rendererName', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-no-renderer-'));
  const file = path.join(dir, 'run.json');
  writeFileSync(file, JSON.stringify({ ...minimal, modelName: 'Qwen/Qwen3-8B', logPath: path.join(dir, 'norenderer'), baseUrl: 'http://127.0.0.1:1' }));
  const r = await client(['validate', file]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /valid \(run norenderer\)/);
  assert.doesNotMatch(r.stderr, ZOD);
});

test('every kind of mistake is one plain line naming its field, in no zod wording', () => {
  const base = { ...minimal, modelName: 'Qwen/Qwen3-8B' };
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ learningRate: '0.1' }, /^learningRate: must be a number, not the text "0\.1"$/],
    [{ learningRate: undefined }, /^learningRate: is required \(a number\)$/],
    [{ loraRank: 0.5 }, /^loraRank: must be a whole number, not 0\.5$/],
    [{ loraRank: 0 }, /^loraRank: must be at least 1, not 0$/],
    [{ topP: 0 }, /^topP: must be above 0, not 0$/],
    [{ llmProxyPort: 70000 }, /^llmProxyPort: must be at most 65535, not 70000$/],
    [{ lossFn: 'pp' }, /^lossFn: must be one of "importance_sampling", "ppo", "cispo", "dro", not the text "pp"$/],
    [{ storeAddress: 'nope' }, /^storeAddress: must be a URL such as http:\/\/127\.0\.0\.1:4747, not the text "nope"$/],
    [{ retainSteps: 'x' }, /^retainSteps: must be a number or "all", not the text "x"$/],
    [{ wandbProject: '' }, /^wandbProject: must not be empty$/],
    [{ proxyUrls: [] }, /^proxyUrls: must not be an empty list$/],
    [{ lossFn: 'dro', lossFnConfig: { beta: '0.1' } }, /^lossFnConfig\.beta: must be a number, not the text "0\.1"$/],
    [{ lossFnConfig: [0.1] }, /^lossFnConfig: must be an object \(\{\.\.\.\}\), not a list$/],
    [{ async: { maxStepsOffPolicy: '2' } }, /^async\.maxStepsOffPolicy: must be a number, not the text "2"$/],
    [{ klReferenceModel: { baseModel: 'Qwen/Qwen3-8B', loadCheckpointPath: 'x' } }, /^klReferenceModel\.loadCheckpointPath: must be a tinker:\/\/ path$/],
    [{ datasetBuilder: { trainDataset: ['a'] } }, /^datasetBuilder\.batchSize: is required \(a number\)$/],
    [{ enableTrace: 'yes' }, /^enableTrace: must be true or false, not the text "yes"$/],
  ];
  for (const [change, expected] of cases) {
    const problems = problemsOf({ ...base, ...change });
    assert.equal(problems.length, 1, `${JSON.stringify(change)}: ${problems.join(' | ')}`);
    assert.match(problems[0]!, expected);
    assert.doesNotMatch(problems[0]!, ZOD);
    assert.doesNotMatch(problems[0]!, /\n/);
  }
  // Not a config object at all.
  for (const raw of [null, [], 'x']) for (const p of problemsOf(raw)) assert.doesNotMatch(p, ZOD, p);
});

test('configure: a bad change is said plainly too', () => {
  assert.throws(() => parseRunChanges({ learningRate: 'fast' }), (err: Error) => {
    assert.equal(err.message, 'configure: learningRate: must be a number, not the text "fast"');
    return true;
  });
  assert.throws(() => parseRunChanges({ evalEvery: -1 }), /^Error: configure: evalEvery: must be at least 0, not -1$/);
});
