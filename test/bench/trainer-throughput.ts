// Throughput of the local model (reported, not asserted):
//   npx tsx test/bench/trainer-throughput.ts [baseModel=local/tiny-hello] [dataDir=<fresh temp dir>]
// prints base-model build time (a fresh dataDir forces a build), forward+backward tokens/s on
// RL-shaped datums, and sampling tokens/s.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { createEngine } from '../../trainer/model';
import type { EngineDatum } from '../../trainer/engine';

const BASE = process.argv[2] ?? 'local/tiny-hello';
const DATA = process.argv[3] ?? mkdtempSync(path.join(tmpdir(), 'agl-bench-'));

async function main(): Promise<void> {
  const engine = createEngine({ dataDir: DATA });
  const tok = engine.tokenizer(BASE);
  let t = performance.now();
  const model = await engine.createModel(BASE, { loraRank: 8, seed: 0 });
  console.log(`base model ${BASE}: ready in ${((performance.now() - t) / 1000).toFixed(1)} s (dataDir ${DATA})`);

  // RL-shaped: 16 prompts x 4 samples.
  const prompts = Array.from({ length: 16 }, (_, i) => [tok.encode('<|bos|>')[0], ...tok.encode(`User: Let's play a game. Say you are ${100 + 37 * i}.\n\nAssistant:`)]);
  const w = model.snapshot();
  t = performance.now();
  let n = 0;
  const seqs: Array<{ prompt: number[]; tokens: number[]; logprobs: number[] }> = [];
  for (const [i, prompt] of prompts.entries()) {
    const s = w.sample(prompt, { maxTokens: 32, temperature: 1, topK: -1, topP: 1, stop: ['\n\nUser:'], seed: i }, 4);
    seqs.push(...s.map((x) => ({ ...x, prompt })));
    n += s.reduce((a, x) => a + x.tokens.length, 0);
  }
  const st = (performance.now() - t) / 1000;
  console.log(`sampling: ${n} tokens in ${st.toFixed(2)} s = ${(n / st).toFixed(0)} tokens/s (16 prompts x 4 samples, prompt forward included)`);

  const data: EngineDatum[] = seqs.map(({ prompt, ...s }) => {
    const full = [...prompt, ...s.tokens];
    const ob = prompt.length - 1;
    return {
      modelInput: full.slice(0, -1),
      lossFnInputs: {
        target_tokens: full.slice(1),
        logprobs: full.slice(1).map((_, i) => (i < ob ? 0 : s.logprobs[i - ob])),
        advantages: full.slice(1).map((_, i) => (i < ob ? 0 : 0.5)),
      },
    };
  });
  const tokens = data.reduce((a, d) => a + d.modelInput.length, 0);
  t = performance.now();
  model.forwardBackward(data, 'importance_sampling', undefined, false);
  const ft = (performance.now() - t) / 1000;
  console.log(`forward+backward: ${tokens} tokens in ${ft.toFixed(2)} s = ${(tokens / ft).toFixed(0)} tokens/s (${data.length} datums)`);
  t = performance.now();
  for (const d of data) model.forwardBackward([d], 'importance_sampling', undefined, false);
  const up = (performance.now() - t) / 1000;
  console.log(`forward+backward without prefix packing (one datum per call): ${(tokens / up).toFixed(0)} tokens/s`);
  t = performance.now();
  model.forwardBackward(data, 'importance_sampling', undefined, true);
  const fo = (performance.now() - t) / 1000;
  console.log(`forward only: ${(tokens / fo).toFixed(0)} tokens/s`);
  t = performance.now();
  model.optimStep({ learningRate: 1e-3, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 0 });
  console.log(`optim step: ${(performance.now() - t).toFixed(1)} ms`);
}

void main();
