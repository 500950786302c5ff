// RL on the hello task directly on the Engine (no server): sample → reward → group-centred
// advantages → importance_sampling datums → forwardBackward → optimStep, and print the reward curve.
//   npx tsx test/bench/trainer-rl-hello.ts [batches=12] [lr=2e-3] [dataDir=.data]
import { createEngine } from '../../trainer/model';
import type { EngineDatum } from '../../trainer/engine';
import { Rng } from '../../trainer/model/rng';

const BATCHES = Number(process.argv[2] ?? 12);
const LR = Number(process.argv[3] ?? 2e-3);
const DATA = process.argv[4] ?? '.data';
const TASKS = 16;
const GROUP = 4;

/** The hello task's reward (agl-store-protocol.md §1.10) on the reply text. */
export function helloReward(reply: string, task: string): number {
  const c = reply.toLowerCase();
  if (c.includes(`i am ${task}`) || c.includes(`i'm ${task}`)) return 1;
  if (c.includes(`not ${task}`)) return -1;
  return 0;
}

async function main(): Promise<void> {
  const t0 = Date.now();
  const engine = createEngine({ dataDir: DATA, log: (l) => console.log(l) });
  const model = await engine.createModel('local/tiny-hello', { loraRank: 8, seed: 0 });
  const tok = engine.tokenizer('local/tiny-hello');
  console.log(`base model ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const rng = new Rng('rl-hello-tasks');
  const curve: number[] = [];
  for (let b = 0; b < BATCHES; b++) {
    const tb = Date.now();
    const sampler = model.snapshot();
    const data: EngineDatum[] = [];
    let sum = 0;
    let sampled = 0;
    const examples: string[] = [];
    for (let g = 0; g < TASKS; g++) {
      const task = String(rng.int(1000));
      const prompt = [tok.encode('<|bos|>')[0], ...tok.encode(`User: Let's play a game. Say you are ${task}.\n\nAssistant:`)];
      const seqs = sampler.sample(prompt, { maxTokens: 32, temperature: 1, topK: -1, topP: 1, stop: ['\n\nUser:'], seed: b * 1000 + g }, GROUP);
      const rewards = seqs.map((s) => helloReward(tok.decode(s.tokens).split('\n\nUser:')[0], task));
      if (g === 0) examples.push(...seqs.map((s, i) => `${rewards[i]} ${JSON.stringify(tok.decode(s.tokens))}`));
      const mean = rewards.reduce((a, r) => a + r, 0) / GROUP;
      sum += mean;
      sampled += seqs.reduce((a, s) => a + s.tokens.length, 0);
      if (rewards.every((r) => r === rewards[0])) continue; // constant group: no signal
      seqs.forEach((s, i) => {
        const full = [...prompt, ...s.tokens];
        const ob = prompt.length - 1;
        const n = full.length - 1;
        data.push({
          modelInput: full.slice(0, -1),
          lossFnInputs: {
            target_tokens: full.slice(1),
            logprobs: Array.from({ length: n }, (_, t) => (t < ob ? 0 : s.logprobs[t - ob])),
            advantages: Array.from({ length: n }, (_, t) => (t < ob ? 0 : rewards[i] - mean)),
          },
        });
      });
    }
    const ts = Date.now();
    const reward = sum / TASKS;
    curve.push(reward);
    if (data.length > 0) {
      model.forwardBackward(data, 'importance_sampling', undefined, false);
      model.optimStep({ learningRate: LR, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 0 });
    }
    const te = Date.now();
    console.log(`batch ${b}: mean reward ${reward.toFixed(3)}  datums ${data.length}  sample ${((ts - tb) / 1000).toFixed(1)} s (${sampled} tokens)  train ${((te - ts) / 1000).toFixed(1)} s`);
    if (b === 0 || b === BATCHES - 1) for (const e of examples) console.log(`    ${e}`);
  }
  console.log(`curve: ${curve.map((r) => r.toFixed(2)).join(' ')}`);
  console.log(`total ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

if (require.main === module) void main();
