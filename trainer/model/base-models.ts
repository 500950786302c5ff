// Base models by name: each is a recipe (shape + synthetic corpus + a short supervised run) that is
// executed once, deterministically, and cached under <dataDir>/base-models/<name>/.
import { quote } from '../../common/front-door';
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { UserError } from '../engine';
import type { BaseModelInfo } from '../engine';
import { adamwStep, newAdamState } from './adamw';
import { FORMAT, readCheckpoint, readMeta, sha256, writeCheckpoint } from './checkpoint';
import { archName, layoutOf, ModelConfig } from './config';
import { CorpusGen, guessCorpus, helloCorpus, helloToolsCorpus } from './corpus';
import { SharePool, ShareRequest } from './grad-share';
import { initParams } from './gpt';
import { readShipped } from './shipped-bases';
import { Rng } from './rng';
import { BOS_ID, encode, TOKENIZER_ID, VOCAB_SIZE } from './tokenizer';

export interface Recipe {
  name: string;
  config: ModelConfig;
  corpus: CorpusGen;
  corpusVersion: number; // bump when the corpus generator changes
  steps: number;
  batchSize: number;
  learningRate: number;
  seed: number;
}

const TINY: ModelConfig = { vocabSize: VOCAB_SIZE, contextLength: 128, dModel: 64, nLayers: 2, nHeads: 4, dFF: 128, dCopy: 32 };

export const RECIPES: Recipe[] = [
  { name: 'local/tiny-hello', config: TINY, corpus: helloCorpus, corpusVersion: 2, steps: 300, batchSize: 16, learningRate: 5e-3, seed: 1 },
  { name: 'local/tiny-guess', config: { ...TINY, contextLength: 256 }, corpus: guessCorpus, corpusVersion: 1, steps: 300, batchSize: 8, learningRate: 5e-3, seed: 2 },
  // The hello forms after the AI SDK example's tool declaration (~316 tokens of prompt): `npm start -- --example ai-sdk`.
  { name: 'local/tiny-hello-tools', config: { ...TINY, contextLength: 512 }, corpus: helloToolsCorpus, corpusVersion: 1, steps: 300, batchSize: 16, learningRate: 5e-3, seed: 4 },
  // A very small model on the hello corpus that builds in about a second: for tests of the server and client.
  {
    name: 'local/tiny-test',
    config: { vocabSize: VOCAB_SIZE, contextLength: 96, dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, dCopy: 8 },
    corpus: helloCorpus, corpusVersion: 1, steps: 12, batchSize: 2, learningRate: 1e-2, seed: 3,
  },
];

export function recipeFor(name: string): Recipe {
  const r = RECIPES.find((x) => x.name === name);
  if (!r) throw new UserError(`unknown base model ${quote(name)}; available: ${RECIPES.map((x) => x.name).join(', ')}`);
  return r;
}

export function infoOf(r: Recipe): BaseModelInfo {
  return {
    name: r.name,
    maxContextLength: r.config.contextLength,
    tokenizerName: TOKENIZER_ID,
    rendererName: 'role_colon',
    vocabSize: r.config.vocabSize,
  };
}

/** Bump when the build's arithmetic changes (e.g. how a batch is split), so caches rebuild. */
const BUILDER_VERSION = 2;

export function recipeHash(r: Recipe): string {
  const { corpus: _c, ...rest } = r;
  return createHash('sha256').update(JSON.stringify({ ...rest, builder: BUILDER_VERSION })).digest('hex').slice(0, 16);
}

/** Token ids and loss weights of one corpus example: BOS + prompt (weight 0) + completion (weight 1). */
export function exampleTokens(prompt: string, completion: string): { input: number[]; target: number[]; weights: number[] } {
  const p = [BOS_ID, ...encode(prompt)];
  const seq = [...p, ...encode(completion)];
  const target = seq.slice(1);
  return { input: seq.slice(0, -1), target, weights: target.map((_, i) => (i >= p.length - 1 ? 1 : 0)) };
}

/**
 * Runs the recipe's supervised training from scratch. Deterministic: each batch is split into two
 * fixed shares (computed on two worker threads when possible) whose gradients are summed in order.
 */
export async function trainBase(r: Recipe, log?: (line: string) => void, threads = 2): Promise<Float64Array> {
  const c = r.config;
  const L = layoutOf(c);
  const P = initParams(c, `${r.name}:${r.seed}`);
  const G = new Float64Array(L.size);
  const st = newAdamState(L.size);
  const rng = new Rng('corpus', r.name, r.seed);
  const warmup = Math.max(1, Math.round(r.steps / 10));
  const pool = new SharePool(threads);
  try {
    for (let s = 0; s < r.steps; s++) {
      const examples: ShareRequest['examples'] = [];
      let n = 0;
      for (let b = 0; b < r.batchSize; b++) {
        const ex = r.corpus(rng);
        const e = exampleTokens(ex.prompt, ex.completion);
        if (e.input.length > c.contextLength) continue;
        examples.push(e);
        n += e.weights.reduce((a, w) => a + w, 0);
      }
      // Examples share their prompt's preamble, so each share packs into far fewer rows (batch.ts).
      const h = Math.ceil(examples.length / 2);
      const shares = [examples.slice(0, h), examples.slice(h)].map((ex) => ({ config: c, params: P, examples: ex }));
      const results = await pool.run(shares);
      G.fill(0);
      let loss = 0;
      for (const res of results) {
        for (let i = 0; i < G.length; i++) G[i] += res.grad[i];
        loss += res.loss;
      }
      // Linear warmup, then linear decay to 10%.
      const frac = s < warmup ? (s + 1) / warmup : 1 - 0.9 * ((s - warmup) / Math.max(1, r.steps - warmup));
      adamwStep(P, G, st, { learningRate: r.learningRate * frac, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 10 });
      if (log && (s % 50 === 0 || s === r.steps - 1)) log(`base ${r.name}: step ${s + 1}/${r.steps} loss/token ${(loss / Math.max(1, n)).toFixed(4)}`);
      await new Promise((res) => setImmediate(res));
    }
  } finally {
    pool.close();
  }
  return P;
}

export function baseDir(dataDir: string, name: string): string {
  return path.join(dataDir, 'base-models', ...name.split('/'));
}

/**
 * The base model's weights: from the cache when its recipe matches; else the weights shipped with the project for
 * this recipe (shipped-bases.ts: what the recipe builds, checksummed); else built now. Cached either way.
 */
export async function loadOrBuildBase(dataDir: string, r: Recipe, log?: (line: string) => void): Promise<Float64Array> {
  const dir = baseDir(dataDir, r.name);
  const want = recipeHash(r);
  try {
    const meta = await readMeta(dir);
    if (meta.recipe === want) return (await readCheckpoint(dir, false)).params;
  } catch {
    // not built yet (or unreadable): build below
  }
  const t0 = Date.now();
  const shipped = await readShipped(r.name, want);
  const params = shipped ?? (await trainBase(r, log));
  await writeCheckpoint(dir, {
    meta: {
      format: FORMAT, baseModel: r.name, config: r.config, loraRank: 0, hasOptimizer: false, adamStep: 0,
      weightsSha256: sha256(params), recipe: want,
    },
    params,
  });
  log?.(`base ${r.name} (${archName(r.config)}) ${shipped ? 'taken from the shipped weights' : 'built'} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return params;
}

