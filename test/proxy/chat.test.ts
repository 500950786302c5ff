// The proxy's OpenAI surface with a scripted sampler: shapes, token ids, logprobs, n, stop, defaults, 400s.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { getRenderer, getTokenizer, toInts } from '../../chat';
import { startHarness, post } from './helpers';
import type { Harness } from './helpers';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

const bytes = getTokenizer('local/tiny-hello');
const roleColon = getRenderer('role_colon', bytes);
const MESSAGES = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Say hello.' },
];

test('non-streamed call: OpenAI shape with prompt_token_ids, token_ids and logprobs', async () => {
  const r = await post(`${h.proxy.url}/v1/chat/completions`, { model: 'local/tiny-hello', messages: MESSAGES, temperature: 0.5 });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('x-agl-policy'), 'p0');
  const c = r.json;
  assert.equal(c.object, 'chat.completion');
  assert.match(c.id, /^chatcmpl-/);
  assert.equal(c.model, 'local/tiny-hello');
  assert.deepEqual(c.prompt_token_ids, toInts(roleColon.buildGenerationPrompt(MESSAGES)));
  assert.equal(c.prompt_token_ids[0], 256, 'BOS of the byte tokenizer');
  assert.equal(c.choices.length, 1);
  const ch = c.choices[0];
  assert.deepEqual(ch.message, { role: 'assistant', content: 'Hello 0! t=0.5' });
  assert.equal(ch.finish_reason, 'stop');
  assert.deepEqual(ch.token_ids, bytes.encode('Hello 0! t=0.5\n\nUser:'));
  assert.equal(ch.logprobs.content.length, ch.token_ids.length);
  assert.deepEqual(ch.logprobs.content[0], { token: 'H', bytes: [72], logprob: -0.5, top_logprobs: [{ token: 'H', bytes: [72], logprob: -0.5 }] });
  assert.deepEqual(c.usage, { prompt_tokens: c.prompt_token_ids.length, completion_tokens: ch.token_ids.length, total_tokens: c.prompt_token_ids.length + ch.token_ids.length });
});

test('/chat/completions (no /v1), n > 1, integer temperature and float top_k', async () => {
  const r = await post(`${h.proxy.url}/chat/completions`, { messages: MESSAGES, n: 3, temperature: 1, top_k: 5.0, top_p: 0.9, seed: 7, max_completion_tokens: 100 });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json.choices.map((c: any) => [c.index, c.message.content]), [[0, 'Hello 0! t=1'], [1, 'Hello 1! t=1'], [2, 'Hello 2! t=1']]);
  assert.equal(r.json.model, 'local/tiny-hello', 'defaults to the policy model name');
});

test('max_tokens cuts the sample: finish_reason length, content is the decoded text', async () => {
  const r = await post(`${h.proxy.url}/v1/chat/completions`, { messages: MESSAGES, max_tokens: 5 });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.choices[0].finish_reason, 'length');
  assert.equal(r.json.choices[0].message.content, 'Hello');
  assert.equal(r.json.choices[0].token_ids.length, 5);
});

test('user stop strings cut tokens, logprobs and content consistently', async () => {
  const r = await post(`${h.proxy.url}/v1/chat/completions`, { messages: MESSAGES, stop: ['!', 'zzz'] });
  assert.equal(r.status, 200, r.text);
  const ch = r.json.choices[0];
  assert.equal(ch.message.content, 'Hello 0');
  assert.deepEqual(ch.token_ids, bytes.encode('Hello 0!'));
  assert.equal(ch.logprobs.content.length, ch.token_ids.length);
  assert.equal(ch.finish_reason, 'stop');
});

test('models and health', async () => {
  const m = (await (await fetch(`${h.proxy.url}/v1/models`)).json()) as any;
  assert.deepEqual(m.data.map((d: any) => d.id), ['local/tiny-hello']);
  const hl = await fetch(`${h.proxy.url}/health`);
  assert.equal(hl.status, 200);
  assert.equal(((await hl.json()) as any).policy, 'p0');
});

const BAD: [string, unknown, RegExp, string | null][] = [
  ['not JSON', '{nope', /not valid JSON/, null],
  ['array body', [], /must be a JSON object/, null],
  ['no messages', { model: 'x' }, /messages must be a non-empty array/, 'messages'],
  ['empty messages', { messages: [] }, /messages must be a non-empty array/, 'messages'],
  ['bad role', { messages: [{ role: 'wizard', content: 'x' }] }, /role must be one of/, 'messages[0].role'],
  ['image part that is no data: URL', { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] }, /expected a data: URL/, 'messages[0].content[0].image_url.url'],
  ['audio part', { messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }] }, /only text and image_url parts/, 'messages[0].content'],
  ['temperature string', { messages: MESSAGES, temperature: '0.7' }, /temperature must be a number/, 'temperature'],
  ['temperature > 2', { messages: MESSAGES, temperature: 2.5 }, /temperature must be at least 0 and at most 2/, 'temperature'],
  ['top_p 0', { messages: MESSAGES, top_p: 0 }, /top_p must be greater than 0/, 'top_p'],
  ['top_k fraction', { messages: MESSAGES, top_k: 2.5 }, /top_k must be an integer/, 'top_k'],
  ['max_tokens 0', { messages: MESSAGES, max_tokens: 0 }, /max_tokens must be at least 1/, 'max_tokens'],
  ['n 0', { messages: MESSAGES, n: 0 }, /n must be at least 1/, 'n'],
  ['seed fraction', { messages: MESSAGES, seed: 1.5 }, /seed must be an integer/, 'seed'],
  ['stop number', { messages: MESSAGES, stop: 5 }, /stop must be/, 'stop'],
  ['stream string', { messages: MESSAGES, stream: 'yes' }, /stream must be a boolean/, 'stream'],
  ['tool args not JSON', { messages: [{ role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{x' } }] }] }, /not valid JSON/, 'messages[0].tool_calls[0]'],
];
for (const [name, body, message, param] of BAD) {
  test(`400 in OpenAI error format: ${name}`, async () => {
    const r = await post(`${h.proxy.url}/v1/chat/completions`, body);
    assert.equal(r.status, 400, r.text);
    assert.match(r.json.error.message, message);
    assert.equal(r.json.error.type, 'invalid_request_error');
    assert.equal(r.json.error.param, param);
  });
}

test('unknown path is a 404 and a wrong method a 405, both in OpenAI error format', async () => {
  const r = await post(`${h.proxy.url}/v1/embeddings`, { input: 'x' });
  assert.equal(r.status, 404);
  assert.match(r.json.error.message, /no route/);
  const g = await fetch(`${h.proxy.url}/v1/chat/completions`);
  assert.equal(g.status, 405);
});
