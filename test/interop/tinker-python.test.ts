// The official Python Tinker SDK (PyPI, pinned: 0.38.0, and 0.16.1 of the JSON era) drives our local trainer
// through the scenario:
// create_lora_training_client → forward_backward (cross_entropy, importance_sampling; ppo with config) → optim_step →
// save_weights_and_get_sampling_client → sample → save_state → load_state, with a token required.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { startProcess, type ManagedProcess } from '../../common/processes';
import { ensureVenv, venvRoot } from '../helpers/python';
import { tempDir } from '../tinker/helpers';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');
const TINKER_SDK = 'tinker==0.38.0';
// The newest SDK (protobuf bodies and results) and one from the JSON era (no client/config, JSON bodies
// without type fields, JSON results), which agent-lightning's example still allows (tinker>=0.2.2).
const SDKS = [{ version: '0.38.0' }, { version: '0.16.1' }];

/** An older SDK beside the pinned one: its dependencies are a subset, so only the package itself is added. */
async function olderSdk(python: string, version: string): Promise<string> {
  const dir = path.join(venvRoot(), `tinker-sdk-${version}`);
  if (!existsSync(path.join(dir, 'tinker', '__init__.py'))) {
    await run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-deps', '--target', dir, `tinker==${version}`], { timeout: 300_000 });
  }
  return dir;
}
const TOKEN = 'tml-interop-secret';
const BASE_MODEL = 'local/tiny-test';

const tmp = tempDir('tinker-interop-');
let trainer: ManagedProcess;
let url: string;

before(async () => {
  trainer = await startProcess({
    name: 'trainer',
    command: process.execPath,
    args: ['--import', 'tsx', 'trainer/main.ts', '--port', '0', '--data', tmp.dir],
    cwd: ROOT,
    env: { ...process.env, AGL_TRAINER_TOKEN: TOKEN },
    readyLine: /trainer listening on (http:\/\/\S+)/,
    readyTimeoutMs: 60_000,
  });
  url = trainer.match![1];
});

after(async () => {
  await trainer?.stop();
  tmp.remove();
});

for (const sdk of SDKS) {
  test(`Python SDK ${sdk.version} trains, samples, saves and loads through the local trainer`, { timeout: 600_000 }, async () => {
    const venv = await ensureVenv('tinker-sdk', [TINKER_SDK]);
    const pythonPath = sdk.version === '0.38.0' ? undefined : await olderSdk(venv.python, sdk.version);
    const { stdout, stderr } = await run(venv.python, ['-W', 'ignore', path.join(__dirname, 'tinker-scenario.py'), url, BASE_MODEL], {
      env: { ...process.env, TINKER_API_KEY: TOKEN, TINKER_TELEMETRY: '0', ...(pythonPath ? { PYTHONPATH: pythonPath } : {}) },
      timeout: 180_000,
      maxBuffer: 16 << 20,
    }).catch((err: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`tinker-scenario.py failed: ${err.message}\n${err.stderr ?? ''}\n${trainer.output().slice(-3000)}`);
    });
    const lines = stdout.trim().split('\n');
    const r = JSON.parse(lines[lines.length - 1]);
    void stderr;

    assert.equal(r.sdk_version, sdk.version);
    assert.ok(r.models.includes(BASE_MODEL));
    assert.match(r.model_id, /^s-.+:train:0$/);
    assert.equal(r.tokenizer_id, 'local/bytes');
    assert.ok(r.loss_after < r.loss_before * 0.95, `cross_entropy loss ${r.loss_before} -> ${r.loss_after}`);

    assert.equal(r.num_sequences, 2);
    assert.equal(r.sample_tokens.length, r.sample_logprobs.length);
    // importance_sampling against the sampler's own logprobs: ratio 1, learner logprobs = sampler logprobs.
    r.is_learner_logprobs.forEach((lp: number, i: number) => assert.ok(Math.abs(lp - r.sample_logprobs[i]) < 1e-4));
    assert.ok(Math.abs(r.is_loss + 0.5 * r.sample_tokens.length) < 1e-3, `is loss ${r.is_loss}`);
    assert.ok(Math.abs(r.ppo_loss + 1.1 * 0.5 * r.sample_tokens.length) < 1e-3, `ppo loss ${r.ppo_loss}`);
    assert.equal(r.prompt_logprobs[0], null);
    assert.equal(r.prompt_logprobs.length, 5 + r.sample_tokens.length);

    assert.equal(r.state_path, `tinker://${r.model_id}/weights/py-ckpt`);
    assert.notEqual(r.loss_moved, r.loss_at_save);
    assert.equal(r.loss_after_load, r.loss_at_save);
    assert.equal(r.loss_after_load_opt, r.loss_at_save);
    assert.equal(r.loss_from_state, r.loss_at_save);

    assert.equal(r.sampler_path, `tinker://${r.model_id}/sampler_weights/py-sampler`);
    assert.equal(r.sampler_base_model, BASE_MODEL);
    assert.equal(r.sampler_tokens.length, 3);

    assert.match(r.bad_input, /400.*out of vocabulary.*'category': 'user'/);
    assert.equal(r.loss_after_bad, r.loss_at_save);
  });
}

test('without the token the trainer answers 401', async () => {
  const res = await fetch(`${url}/api/v1/get_server_capabilities`, { signal: AbortSignal.timeout(5000) });
  assert.equal(res.status, 401);
  assert.equal(((await res.json()) as { category: string }).category, 'user');
  const ok = await fetch(`${url}/api/v1/get_server_capabilities`, { headers: { authorization: `Bearer ${TOKEN}` }, signal: AbortSignal.timeout(5000) });
  assert.equal(ok.status, 200);
});
