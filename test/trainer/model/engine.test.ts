// The Engine end to end on the small `local/tiny-test` base model (builds in about a second).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { UserError } from '../../../trainer/engine';
import { createEngine } from '../../../trainer/model';
import type { EngineDatum, TrainableModel } from '../../../trainer/engine';
import { byteTokenizer } from '../../../trainer/model/tokenizer';
import { adam, params, prompt, rlStep } from './fixtures/rl-hash';

const BASE = 'local/tiny-test';
const dataDir = mkdtempSync(path.join(tmpdir(), 'agl-engine-'));
const engine = createEngine({ dataDir });

test('base model is built once and cached on disk', async () => {
  await engine.createModel(BASE, { loraRank: 4, seed: 0 });
  assert.ok(existsSync(path.join(dataDir, 'base-models', 'local', 'tiny-test', 'meta.json')));
  assert.ok(engine.baseModels().some((b) => b.name === 'local/tiny-hello' && b.rendererName === 'role_colon'));
});

test('sampled logprobs agree with forward logprobs (within 1e-4), stop strings included', async () => {
  const m = await engine.createModel(BASE, { loraRank: 4, seed: 0 });
  const seqs = m.snapshot().sample(prompt, { ...params, maxTokens: 40, seed: 7 }, 3);
  const data = seqs.map((s) => {
    const full = [...prompt, ...s.tokens];
    return { modelInput: full.slice(0, -1), lossFnInputs: { target_tokens: full.slice(1), weights: full.slice(1).map(() => 1) } };
  });
  const out = m.forwardBackward(data, 'cross_entropy', undefined, true);
  seqs.forEach((s, i) => {
    const lp = out.lossFnOutputs[i].logprobs.slice(prompt.length - 1);
    assert.equal(lp.length, s.logprobs.length);
    lp.forEach((x, t) => assert.ok(Math.abs(x - s.logprobs[t]) < 1e-4, `token ${t}: ${x} vs ${s.logprobs[t]}`));
    if (s.stopReason === 'stop') {
      const last = s.tokens[s.tokens.length - 1];
      assert.ok(last === byteTokenizer.eosTokenId || byteTokenizer.decode(s.tokens).endsWith('\n\nUser:'));
    }
    else assert.equal(s.tokens.length, 40);
  });
  // Prompt logprobs are the same numbers, shifted by one with a null first.
  const full = [...prompt, ...seqs[0].tokens];
  const pl = m.snapshot().promptLogprobs(full);
  assert.equal(pl[0], null);
  assert.ok(Math.abs((pl[full.length - 1] as number) - out.lossFnOutputs[0].logprobs[full.length - 2]) < 1e-9);
});

test('sampling: same seed same samples; temperature 0 is greedy; top_k 1 has logprob 0; stop token ids', async () => {
  const w = await engine.baseWeights(BASE);
  const a = w.sample(prompt, { ...params, seed: 11 }, 3);
  const b = w.sample(prompt, { ...params, seed: 11 }, 3);
  assert.deepEqual(a, b);
  const g1 = w.sample(prompt, { ...params, temperature: 0 }, 2);
  assert.deepEqual(g1[0].tokens, g1[1].tokens);
  const k1 = w.sample(prompt, { ...params, topK: 1, seed: 5 }, 1);
  assert.deepEqual(k1[0].tokens, g1[0].tokens);
  k1[0].logprobs.forEach((x) => assert.ok(Math.abs(x) < 1e-12));
  const first = g1[0].tokens[0];
  const st = w.sample(prompt, { ...params, temperature: 0, stop: [first] }, 1)[0];
  assert.deepEqual(st.tokens, [first]);
  assert.equal(st.stopReason, 'stop');
  const len = w.sample(prompt, { ...params, stop: [], maxTokens: 5, seed: 1 }, 1)[0];
  assert.equal(len.tokens.length, 5);
  assert.equal(len.stopReason, 'length');
});

test('cross_entropy loss decreases on a fixed batch; gradients accumulate until optimStep', async () => {
  const m = await engine.createModel(BASE, { loraRank: 4, seed: 0 });
  const text = [...prompt, ...byteTokenizer.encode(' I am 42.\n\nUser:')];
  const datum = {
    modelInput: text.slice(0, -1),
    lossFnInputs: { target_tokens: text.slice(1), weights: text.slice(1).map((_, i) => (i >= prompt.length - 1 ? 1 : 0)) },
  };
  const losses: number[] = [];
  for (let i = 0; i < 8; i++) {
    losses.push(m.forwardBackward([datum], 'cross_entropy', undefined, false).metrics['loss:sum']);
    m.optimStep({ ...adam, weightDecay: 0 });
  }
  assert.ok(losses[7] < 0.6 * losses[0] && losses[7] < losses[6], `loss went ${losses[0]} -> ${losses[7]}`);
  // Two calls with one datum each accumulate the same gradient as one call with both.
  const other = { modelInput: datum.modelInput.slice(1), lossFnInputs: { target_tokens: text.slice(2), weights: datum.lossFnInputs.weights.slice(1) } };
  const a = await engine.createModel(BASE, { loraRank: 4, seed: 0 });
  const b = await engine.createModel(BASE, { loraRank: 4, seed: 0 });
  a.forwardBackward([datum], 'cross_entropy', undefined, false);
  a.forwardBackward([other], 'cross_entropy', undefined, false);
  b.forwardBackward([datum, other], 'cross_entropy', undefined, false);
  a.optimStep(adam);
  b.optimStep(adam);
  assert.equal(a.weightsHash(), b.weightsHash());
  // forward_only leaves no gradient behind: an optim step with lr 0 and no decay changes nothing.
  const c = await engine.createModel(BASE, { loraRank: 4, seed: 0 });
  const before = c.weightsHash();
  c.forwardBackward([datum], 'cross_entropy', undefined, true);
  c.optimStep({ ...adam, weightDecay: 0 });
  assert.equal(c.weightsHash(), before);
});

test('deterministic: same seeds and inputs give bit-identical weights, also in another process', async () => {
  const run = async (dir: string) => {
    const e = createEngine({ dataDir: dir });
    const m = await e.createModel(BASE, { loraRank: 4, seed: 0 });
    for (let i = 0; i < 3; i++) rlStep(m, 100 + i);
    return m.weightsHash();
  };
  const h1 = await run(dataDir);
  const h2 = await run(mkdtempSync(path.join(tmpdir(), 'agl-engine-')));
  assert.equal(h1, h2);
  const other = await engine.createModel(BASE, { loraRank: 4, seed: 0 });
  rlStep(other, 999);
  assert.notEqual(other.weightsHash(), h1);
  const script = path.join(__dirname, 'fixtures', 'rl-hash.ts');
  const out = execFileSync(process.execPath, ['--import', 'tsx', script, mkdtempSync(path.join(tmpdir(), 'agl-engine-'))], { encoding: 'utf8' });
  assert.equal(out.trim(), h1);
});

test('save/load round trip restores weights and optimizer state; frozen snapshots stay frozen', async () => {
  const m = await engine.createModel(BASE, { loraRank: 4, seed: 0 });
  rlStep(m, 1);
  const snap = m.snapshot();
  const snapOut = snap.sample(prompt, { ...params, seed: 3 }, 2);
  const dir = path.join(dataDir, 'ckpt', 'a');
  await m.saveState(dir);
  await m.saveState(dir); // overwriting a checkpoint of the same name works
  assert.deepEqual(readdirSync(path.dirname(dir)), ['a']); // no temp directories left behind
  const n = await engine.createModel(BASE, { loraRank: 4, seed: 0 });
  await n.loadState(dir, true);
  assert.equal(n.weightsHash(), m.weightsHash());
  rlStep(m, 2);
  rlStep(n, 2);
  assert.equal(n.weightsHash(), m.weightsHash()); // same Adam moments → same next step
  // Training after the snapshot did not leak into it.
  assert.deepEqual(snap.sample(prompt, { ...params, seed: 3 }, 2), snapOut);
  const sdir = path.join(dataDir, 'ckpt', 'sampler');
  await snap.save(sdir);
  const loaded = await engine.loadFrozen(sdir);
  assert.equal(loaded.baseModel, BASE);
  assert.deepEqual(loaded.sample(prompt, { ...params, seed: 3 }, 2), snapOut);
  await assert.rejects(n.loadState(sdir, true), UserError); // sampler weights have no optimizer state
  await assert.rejects(engine.loadFrozen(path.join(dataDir, 'nope')), UserError);
});

test('bad input is a UserError with a clear message, and changes nothing', async () => {
  await assert.rejects(engine.createModel('local/nope', { loraRank: 4, seed: 0 }), /unknown base model/);
  assert.throws(() => engine.tokenizer('nope/nope'), UserError);
  const m = await engine.createModel(BASE, { loraRank: 4, seed: 0 });
  const h = m.weightsHash();
  const ok = { modelInput: [256, 65, 66], lossFnInputs: { target_tokens: [65, 66, 67], weights: [1, 1, 1] } };
  const bad = (d: EngineDatum, re: RegExp, fn: 'cross_entropy' | 'ppo' = 'cross_entropy') =>
    assert.throws(() => m.forwardBackward([ok, d], fn, undefined, false), (e: unknown) => e instanceof UserError && re.test(e.message));
  bad({ ...ok, modelInput: [256, 65, 999] }, /outside the vocabulary/);
  bad({ ...ok, lossFnInputs: { ...ok.lossFnInputs, target_tokens: [65, 66, 258] } }, /outside the vocabulary/);
  bad({ modelInput: new Array(200).fill(65), lossFnInputs: { target_tokens: new Array(200).fill(65), weights: new Array(200).fill(1) } }, /context length/);
  bad({ ...ok, lossFnInputs: { ...ok.lossFnInputs, weights: [1, 1] } }, /length 2/);
  bad(ok, /needs loss_fn_inputs.logprobs/, 'ppo');
  assert.throws(() => m.forwardBackward([ok], 'mse' as never, undefined, false), /unknown loss_fn/);
  m.optimStep({ ...adam, learningRate: 0, weightDecay: 0 });
  assert.equal(m.weightsHash(), h);
  assert.throws(() => m.optimStep({ ...adam, learningRate: -1 }), UserError);
  const w = m.snapshot();
  for (const p of [{ temperature: -1 }, { topP: 0 }, { topP: 1.5 }, { topK: -3 }, { maxTokens: -1 }, { maxTokens: 1.5 }]) {
    assert.throws(() => w.sample(prompt, { ...params, ...p }, 1), UserError, JSON.stringify(p));
  }
  assert.throws(() => w.sample(prompt, params, 0), UserError);
  assert.throws(() => w.sample([], params, 1), UserError);
  assert.throws(() => w.sample(new Array(97).fill(65), params, 1), /context length/);
  assert.throws(() => w.sample([300], params, 1), /outside the vocabulary/);
});

test('base-model builds are deterministic whether the batch shares run on worker threads or in-process', async () => {
  const { recipeFor, trainBase } = await import('../../../trainer/model/base-models');
  const { sha256 } = await import('../../../trainer/model/checkpoint');
  const r = { ...recipeFor(BASE), steps: 3, batchSize: 4 };
  const a = await trainBase(r, undefined, 0);
  const b = await trainBase(r, undefined, 2);
  assert.equal(sha256(a), sha256(b));
  // ...and the worker threads really start (they need the TypeScript loader registered inside them).
  const { SharePool } = await import('../../../trainer/model/grad-share');
  const pool = new SharePool(2);
  const share = { config: r.config, params: a, examples: [{ input: [256, 65], target: [65, 66], weights: [1, 1] }] };
  await pool.run([share, share]);
  assert.equal(pool.size, 2);
  pool.close();
});
