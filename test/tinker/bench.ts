// Throughput of the local trainer through the Tinker API (reported, never asserted):
//   npx tsx test/tinker/bench.ts [--model local/tiny-hello] [--wire proto|json] [--steps 10]
// Starts an in-process trainer on a temporary data dir (the engine builds or reuses its base model under
// .data/trainer), then times create_model (incl. a first base-model build), forward_backward+optim_step
// and sampling.
import { parseArgs } from 'node:util';
import path from 'node:path';
import { ServiceClient } from '../../tinker';
import { createEngine } from '../../trainer/model';
import { startTestTrainer, tempDir, textDatum } from './helpers';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { model: { type: 'string', default: 'local/tiny-hello' }, wire: { type: 'string', default: 'proto' }, steps: { type: 'string', default: '10' } } });
  const tmp = tempDir('tinker-bench-');
  const engine = createEngine({ dataDir: path.resolve('.data/trainer') });
  const model = values.model!;
  const server = await startTestTrainer({ engine, dataDir: tmp.dir });
  // A first create_model builds the base model: minutes of CPU for the larger recipes.
  const service = new ServiceClient({ baseUrl: server.url, apiKey: 'tml-bench', wire: values.wire as 'proto' | 'json', futureTimeoutMs: 60 * 60_000 });
  const report: Record<string, number | string> = { model, wire: values.wire! };
  try {
    let t = performance.now();
    const tc = await service.createLoraTrainingClient(model, { seed: 1 });
    report.create_model_ms = Math.round(performance.now() - t);

    const line = 'User: What is 2+2?\n\nAssistant: 4\n\nUser: ';
    const batch = Array.from({ length: 8 }, (_, i) => textDatum(`${line}${i}`.repeat(2)));
    const tokens = batch.reduce((n, d) => n + d.modelInput.length, 0);
    await tc.forwardBackward(batch, 'cross_entropy'); // warm-up
    await tc.optimStep({ learningRate: 1e-3 });
    const steps = Number(values.steps);
    t = performance.now();
    for (let i = 0; i < steps; i++) {
      const fb = tc.forwardBackward(batch, 'cross_entropy');
      const op = tc.optimStep({ learningRate: 1e-3 });
      await Promise.all([fb, op]);
    }
    const trainS = (performance.now() - t) / 1000;
    report.train_step_ms = Math.round((trainS / steps) * 1000);
    report.train_tokens_per_s = Math.round((tokens * steps) / trainS);

    t = performance.now();
    for (let i = 0; i < 20; i++) await tc.forward([textDatum('hi!')], 'cross_entropy');
    report.tiny_forward_roundtrip_ms = +((performance.now() - t) / 20).toFixed(1);

    const sampler = await tc.saveWeightsAndGetSamplingClient();
    const prompt = [...Buffer.from('User: What is 2+2?\n\nAssistant:')];
    t = performance.now();
    let sampled = 0;
    for (let i = 0; i < 4; i++) {
      const res = await sampler.sample(prompt, 8, { maxTokens: 32, temperature: 1, seed: i, stop: [] });
      sampled += res.sequences.reduce((n, s) => n + s.tokens.length, 0);
    }
    const sampleS = (performance.now() - t) / 1000;
    report.sample_tokens_per_s = Math.round(sampled / sampleS);
  } finally {
    await service.close();
    await server.close();
    tmp.remove();
  }
  console.log(JSON.stringify(report));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
