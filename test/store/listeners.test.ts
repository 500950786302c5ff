// Listeners that used to pile up until Node warned (MaxListenersExceededWarning): one `close` listener per
// long-poll on a kept-alive connection in the store, and one abort listener per LLM call on a runner's signal (the
// openai SDK adds one per call and never removes it). Many long-polls and many rollouts later, none is left.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { startRunners } from '../../agents/runner';
import { startTestStore, type TestStore } from './helpers';

const warnings: string[] = [];
const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
process.on('warning', onWarning);
const stores: TestStore[] = [];
after(async () => {
  process.off('warning', onWarning);
  for (const s of stores) await s.close();
});
const newStore = async () => {
  const s = await startTestStore();
  stores.push(s);
  return s;
};

test('30 long-polls on one kept-alive connection leave no listener behind on its socket', async () => {
  const t = await newStore();
  const r = await t.client.enqueueRollout('x');
  // One after another, so every request goes over the same pooled connection; a 0.05 s wait times out at once.
  for (let i = 0; i < 30; i++) {
    const res = await fetch(`${t.server.url}/v1/agl/waits/rollouts`, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'keep-alive' }, body: JSON.stringify({ rollout_ids: [r.rollout_id], timeout: 0.05 }) });
    assert.equal(res.status, 200);
    await res.arrayBuffer();
  }
  await new Promise((res) => setTimeout(res, 50));
  assert.deepEqual(warnings.filter((w) => /MaxListeners/.test(w)), [], 'no MaxListenersExceededWarning');
});

test('a runner whose agent calls the LLM with the openai SDK 30 times keeps no abort listener per call', async () => {
  const t = await newStore();
  // A stand-in LLM: every chat completion answers "hi".
  const llm = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'c', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] }));
    });
  });
  await new Promise<void>((res) => llm.listen(0, '127.0.0.1', res));
  const llmUrl = `http://127.0.0.1:${(llm.address() as AddressInfo).port}/v1`;
  try {
    await t.client.addResources({ main_llm: { resource_type: 'llm', endpoint: llmUrl, model: 'm', api_key: null, sampling_parameters: {} } });
    const rollouts = [];
    for (let i = 0; i < 30; i++) rollouts.push(await t.client.enqueueRollout(i));
    const group = startRunners<number>(1, async (_task, ctx) => {
      const client = new OpenAI({ baseURL: ctx.llm!.endpoint, apiKey: 'x', maxRetries: 0 });
      await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { signal: ctx.signal });
      return 1;
    }, { storeUrl: t.server.url, pollIntervalMs: 20, log: () => {}, maxRollouts: rollouts.length });
    await group.done;
    const finished = await t.client.waitForAllRollouts(rollouts.map((r) => r.rollout_id), 10);
    assert.equal(finished.filter((r) => r.status === 'succeeded').length, 30);
    assert.deepEqual(warnings.filter((w) => /MaxListeners/.test(w)), [], 'no MaxListenersExceededWarning');
  } finally {
    llm.close();
  }
});
