// The proxy in front of the local trainer's real model engine (a tiny byte GPT, `local/tiny-test`, built in
// about a second): role_colon prompt, sampled tokens with logprobs, parse at "\n\nUser:".
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { getRenderer, getTokenizer, toInts } from '../../chat';
import { parsePolicySpec } from '../../proxy/policy-spec';
import { startProxy } from '../../proxy/server';
import type { ProxyServer } from '../../proxy/server';
import { TinkerSamplerFactory } from '../../proxy/tinker-sampler';
import { createEngine } from '../../trainer/model';
import { startTrainerServer } from '../../trainer/server/server';
import type { TrainerServer } from '../../trainer/server/server';
import { post } from './helpers';

const MODEL = 'local/tiny-test';
let dir: string;
let trainer: TrainerServer;
let factory: TinkerSamplerFactory;
let proxy: ProxyServer;

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'agl-proxy-engine-'));
  trainer = await startTrainerServer({ engine: createEngine({ dataDir: dir, log: () => {} }), dataDir: dir, log: () => {} });
  factory = new TinkerSamplerFactory({ baseUrl: trainer.url, apiKey: 'tml-local', futureTimeoutMs: 120_000 });
  proxy = await startProxy({ port: 0, factory, initialPolicy: parsePolicySpec({ switchId: 'tiny', modelName: MODEL, baseModel: MODEL }), log: () => {} });
});
after(async () => {
  await proxy?.close();
  await factory?.close();
  await trainer?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('samples the real tiny model through the Tinker API; ids, logprobs and parse are consistent', async () => {
  const messages = [{ role: 'user', content: 'Hello!' }];
  const r = await post(`${proxy.url}/v1/chat/completions`, { messages, max_tokens: 40, temperature: 0.7, n: 2, seed: 1 });
  assert.equal(r.status, 200, r.text);
  const tok = getTokenizer(MODEL);
  const renderer = getRenderer('role_colon', tok);
  assert.deepEqual(r.json.prompt_token_ids, toInts(renderer.buildGenerationPrompt(messages)));
  for (const c of r.json.choices) {
    assert.ok(c.token_ids.length > 0 && c.token_ids.length <= 40);
    assert.equal(c.logprobs.content.length, c.token_ids.length);
    assert.ok(c.logprobs.content.every((e: any) => Number.isFinite(e.logprob) && e.logprob <= 0));
    const parsed = renderer.parseResponse(c.token_ids);
    const ok = parsed.termination !== 'malformed';
    assert.equal(c.message.content, ok ? parsed.message.content : tok.decode(c.token_ids));
    assert.ok(['stop', 'length'].includes(c.finish_reason));
    if (ok) assert.ok(tok.decode(c.token_ids).endsWith('\n\nUser:'), 'the stop string ends the sampled tokens');
  }
});
