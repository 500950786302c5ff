// Config mistakes that used to pass `validate` and then retry for ever: an unknown renderer, a renderer that does
// not fit the model, a misspelt local model name (checked against the trainer's get_server_capabilities) and a
// hosted-Tinker config without a credential. `validate` says each with its field path; the run's first activity
// (prepareRun for what the config says by itself, initPolicy for what the trainer says) fails non-retryably with the same words, so the run ends at once with the reason.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { createActivities } from '../../activities';
import type { RunSettings } from '../../shared/run-types';
import { runActivity } from '../helpers/activity-bench';
import { ConfigError } from '../../config/errors';
import { validateRunConfig } from '../../config/load';
import { checkTrainer } from '../../config/trainer-check';
import type { TrainerServer } from '../../trainer/server/server';
import { startTestTrainer, TEST_MODEL } from '../tinker/helpers';

const scratch = mkdtempSync(path.join(process.env.AGL_TEST_SCRATCH ?? os.tmpdir(), 'agl-trainer-check-'));
let trainer: TrainerServer;
before(async () => {
  trainer = await startTestTrainer({ dataDir: path.join(scratch, 'trainer'), port: 0 });
});
after(async () => {
  await trainer?.close();
});

const config = (over: Record<string, unknown>) => ({
  learningRate: 1e-3,
  datasetBuilder: { batchSize: 2, trainDataset: ['a', 'b'] },
  modelName: TEST_MODEL,
  rendererName: 'role_colon',
  logPath: path.join(scratch, 'runs', 'r'),
  baseUrl: trainer.url,
  ...over,
});

function problemsOf(over: Record<string, unknown>): string[] {
  try {
    validateRunConfig(config(over));
    return [];
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.problems;
  }
}

test('an unknown renderer, a renderer the model cannot use and a model the registry does not know are config errors', () => {
  assert.match(problemsOf({ rendererName: 'qwen-3' })[0]!, /^rendererName: unknown renderer "qwen-3" \(known: role_colon, role_colon_tools, llama3, qwen3, /);
  assert.match(problemsOf({ rendererName: 'qwen3_instruct' })[0]!, /^rendererName: qwen3_instruct cannot render for local\/tiny-test: renderer qwen3 needs <\|im_end\|> as one token/);
  assert.match(problemsOf({ modelName: 'Qwen/Qwen3-8B', rendererName: 'llama3' })[0]!, /^rendererName: llama3 cannot render for Qwen\/Qwen3-8B: .*<\|eot_id\|>/);
  assert.match(problemsOf({ modelName: 'gpt-4o' })[0]!, /^modelName: model "gpt-4o": expected "org\/Model"/);
  assert.match(problemsOf({ modelName: 'Qwen/Qwen9-1B' })[0]!, /^modelName: unknown model "Qwen\/Qwen9-1B": tinker-cookbook 0.6.1 has no entry for it/);
  assert.deepEqual(problemsOf({}), []);
});

test('a misspelt local model is refused by name against what the trainer serves', async () => {
  const check = await checkTrainer({ modelName: 'local/tiny-tset' }, { baseUrl: trainer.url });
  assert.equal(check.unreachable, null);
  assert.equal(check.problems.length, 1);
  assert.match(check.problems[0]!, /^modelName: "local\/tiny-tset" is not served by the trainer at http:\/\/127\.0\.0\.1:\d+ \(it serves: .*local\/tiny-test/);
  assert.deepEqual((await checkTrainer({ modelName: TEST_MODEL }, { baseUrl: trainer.url })).problems, []);
  const ref = await checkTrainer({ modelName: TEST_MODEL, klReferenceModel: { baseModel: 'local/nope' } }, { baseUrl: trainer.url });
  assert.match(ref.problems[0]!, /^klReferenceModel\.baseModel: "local\/nope" is not served/);
});

test('hosted Tinker without TINKER_API_KEY is refused at once; an unreachable trainer is "unknown", not a problem', async () => {
  const env = { PATH: process.env.PATH };
  const hosted = await checkTrainer({ modelName: 'Qwen/Qwen3-8B' }, { baseUrl: null, env });
  assert.deepEqual(hosted.problems, ['baseUrl (null: hosted Tinker): https://tinker.thinkingmachines.dev/services/tinker-prod needs a credential: set TINKER_API_KEY (or TINKER_CREDENTIAL_CMD) in the environment of the worker and the proxy']);
  const down = await checkTrainer({ modelName: TEST_MODEL }, { baseUrl: 'http://127.0.0.1:9', env, timeoutMs: 1_000 });
  assert.deepEqual(down.problems, []);
  assert.match(down.unreachable ?? '', /could not ask the trainer at http:\/\/127\.0\.0\.1:9/);
});

test('the run\'s first activities fail it for good, naming the field, instead of retrying', async () => {
  const { prepareRun, initPolicy } = createActivities();
  const settings = (over: Record<string, unknown>) => ({ ...validateRunConfig(config(over)), runName: 'r', datasetBuilder: { batchSize: 2 } }) as unknown as RunSettings;
  const failure = async (run: () => Promise<unknown>, env: Record<string, string | undefined> = {}) => {
    const saved = { ...process.env };
    for (const [k, v] of Object.entries(env)) if (v === undefined) delete process.env[k];
    try {
      await run();
    } catch (err) {
      return err as ApplicationFailure;
    } finally {
      process.env = saved;
    }
    assert.fail('the activity accepted the config');
  };
  // prepareRun: what the config says by itself.
  const renderer = await failure(() => runActivity(prepareRun, config({ rendererName: 'llama-3' }) as never));
  assert.ok(renderer instanceof ApplicationFailure && renderer.nonRetryable, String(renderer));
  assert.equal(renderer.type, 'InvalidRunConfig');
  assert.match(renderer.message, /rendererName: unknown renderer "llama-3"/);
  // initPolicy: what the trainer says, before it creates anything.
  const misspelt = await failure(() => runActivity(initPolicy, settings({ modelName: 'local/tiny-tset' }), 0));
  assert.ok(misspelt instanceof ApplicationFailure && misspelt.nonRetryable, String(misspelt));
  assert.equal(misspelt.type, 'InvalidRunConfig');
  assert.match(misspelt.message, /modelName: "local\/tiny-tset" is not served/);
  const noKey = await failure(() => runActivity(initPolicy, settings({ baseUrl: null, modelName: 'Qwen/Qwen3-8B', rendererName: 'qwen3' }), 0),
    { TINKER_API_KEY: undefined, TINKER_CREDENTIAL_CMD: undefined, TINKER_BASE_URL: undefined });
  assert.ok(noKey.nonRetryable);
  assert.match(noKey.message, /needs a credential: set TINKER_API_KEY/);
});

test('`npm run client -- validate` prints the trainer\'s answer with the field and exits 2', async () => {
  const file = path.join(scratch, 'misspelt.run.json');
  writeFileSync(file, JSON.stringify(config({ modelName: 'local/tiny-tset' })));
  // Not spawnSync: the trainer runs in this process and must answer meanwhile.
  const res = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(process.execPath, ['--import', 'tsx', path.join(__dirname, '../../client.ts'), 'validate', file], (_err, stdout, stderr) =>
      resolve({ status: child.exitCode, stdout, stderr }));
  });
  assert.equal(res.status, 2, res.stdout + res.stderr);
  assert.match(res.stderr, /- modelName: "local\/tiny-tset" is not served by the trainer/);
});
