// `npm run bench -- logprob-gather`: the train step's per-datum logprob calls (KL against a reference model, and
// post-update KL), one at a time as before against gathered at most 32 in flight (activities/train-step.ts, as the
// cookbook gathers them), on the local trainer over real HTTP: 64 datums of the hello task's length, the two arms
// interleaved over --reps rounds in one run so load hits both alike.
//   npm run bench -- logprob-gather [--datums 64] [--reps 5] [--model local/tiny-hello]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startProcess } from '../../common/processes';
import { mapConcurrent } from '../../common/concurrent-map';
import { ServiceClient } from '../../tinker';
import { loadAverage } from './bench-kit';

const ROOT = path.resolve(__dirname, '..', '..');
const { values: v } = parseArgs({ options: { datums: { type: 'string', default: '64' }, reps: { type: 'string', default: '5' }, model: { type: 'string', default: 'local/tiny-hello' } } });
const DATUMS = Number(v.datums);
const REPS = Number(v.reps);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-logprob-gather-'));
  const trainer = await startProcess({
    name: 'trainer', command: process.execPath, args: ['--import', 'tsx', 'trainer/main.ts', '--port', '0', '--data', dir], cwd: ROOT, readyLine: /trainer listening on (http:\/\/\S+)/,
  });
  try {
    const service = new ServiceClient({ baseUrl: trainer.match![1]!, apiKey: 'tml-local', futureTimeoutMs: 60_000 });
    const sampler = await service.createSamplingClient({ baseModel: String(v.model) });
    // Byte-level models: a hello prompt and answer is about 40 tokens.
    const seqs = Array.from({ length: DATUMS }, (_, i) => Array.from(Buffer.from(`user: Please say "I am ${i}".\nassistant: I am ${i}`)));
    await sampler.computeLogprobs(seqs[0]!); // warm
    const one: number[] = [];
    const gathered: number[] = [];
    for (let r = 0; r < REPS; r++) {
      let t = performance.now();
      for (const s of seqs) await sampler.computeLogprobs(s);
      one.push((performance.now() - t) / 1000);
      t = performance.now();
      await mapConcurrent(seqs, 32, (s) => sampler.computeLogprobs(s));
      gathered.push((performance.now() - t) / 1000);
    }
    const lines = [
      `| ${DATUMS} datums, ${v.model}, local trainer | one at a time | gathered (≤32 in flight) | ratio |`,
      '|---|---:|---:|---:|',
      `| median of ${REPS} rounds, s | ${median(one).toFixed(3)} | ${median(gathered).toFixed(3)} | ${(median(one) / median(gathered)).toFixed(2)}x |`,
      '',
      `load average ${loadAverage()}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await trainer.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: Error) => {
  process.stderr.write(`bench logprob-gather: ${err.message}\n`);
  process.exit(1);
});
