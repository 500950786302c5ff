// POST /v1/completions with a scripted sampler: a prompt rendered with no chat template (a text after the
// tokenizer's BOS, token ids as given), OpenAI's default of 16 tokens, n, stop strings, the stream, the span,
// and the features it refuses.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { getTokenizer } from '../../chat';
import { StoreClient } from '../../store/client';
import { post, assertOpenAiBadRequest, startHarness, type Harness } from './helpers';

const bytes = getTokenizer('local/tiny-hello');
let h: Harness;
let store: StoreClient;
before(async () => {
  h = await startHarness({ withStore: true, script: (_p, params, i) => `Hello ${i}! t=${params.temperature} and then a much longer tail` });
  store = new StoreClient(h.store!.url, { retryDelaysMs: [50], token: '' });
});
after(() => h.close());

const complete = (body: unknown, base = h.proxy.url) => post(`${base}/v1/completions`, body);

test('a text prompt is the tokenizer BOS and the text, no chat template; 16 tokens unless max_tokens says otherwise', async () => {
  const r = await complete({ model: 'm', prompt: 'Once upon a time' });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json.prompt_token_ids, [256, ...bytes.encode('Once upon a time')]);
  const [c] = r.json.choices;
  assert.equal(r.json.object, 'text_completion');
  assert.match(r.json.id, /^cmpl-/);
  assert.equal(c.finish_reason, 'length');
  assert.equal(c.token_ids.length, 16, "OpenAI's documented default");
  assert.equal(c.text, bytes.decode(c.token_ids));
  assert.deepEqual(c.logprobs.tokens.join(''), c.text);
  assert.equal(c.logprobs.token_logprobs.length, 16);
  assert.deepEqual(c.logprobs.text_offset.slice(0, 3), [0, 1, 2]);
});

test('token ids are used as given; n, stop strings and temperature as for chat', async () => {
  const r = await complete({ prompt: [[256, 72, 105]], n: 2, stop: ['!'], temperature: 0.5, max_tokens: 40 });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json.prompt_token_ids, [256, 72, 105]);
  assert.deepEqual(r.json.choices.map((c: any) => [c.text, c.finish_reason]), [['Hello 0', 'stop'], ['Hello 1', 'stop']]);
  assert.deepEqual(r.json.choices[1].token_ids, bytes.encode('Hello 1!'));
});

test('stream: text chunks, then a last chunk with token ids, logprobs and usage, then [DONE]; the scoped span', async () => {
  const rollout = await store.startRollout({ task: 'c' });
  const base = `${h.proxy.url}/rollout/${rollout.rollout_id}/attempt/${rollout.attempt.attempt_id}`;
  const r = await complete({ prompt: 'Say', max_tokens: 8, stream: true, stream_options: { include_usage: true } }, base);
  const events = r.text.trim().split('\n\n').map((l) => l.slice('data: '.length));
  assert.equal(events.at(-1), '[DONE]');
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
  const last = chunks.at(-1);
  assert.equal(chunks.slice(0, -1).map((c) => c.choices[0].text).join(''), 'Hello 0!');
  assert.deepEqual(last.choices[0].token_ids, bytes.encode('Hello 0!'));
  assert.equal(last.usage.completion_tokens, 8);
  const [span] = (await store.querySpans(rollout.rollout_id)).items;
  assert.equal(span!.attributes['agl.api'], 'completions');
  assert.equal(span!.attributes['agl.prompt.text'], 'Say');
  assert.deepEqual(span!.attributes.prompt_token_ids, last.prompt_token_ids);
  assert.deepEqual(span!.attributes.response_token_ids, last.choices[0].token_ids);
});

const BAD: [string, unknown, RegExp, string | null][] = [
  ['no prompt', { model: 'm' }, /prompt must be/, 'prompt'],
  ['a batch of prompts', { prompt: ['a', 'b'] }, /batch of 2 prompts/, 'prompt'],
  ['a token id outside the vocabulary', { prompt: [1, 99999] }, /not in the vocabulary/, 'prompt'],
  ['echo', { prompt: 'a', echo: true }, /echoing/, 'echo'],
  ['best_of', { prompt: 'a', best_of: 3 }, /best_of/, 'best_of'],
  ['a penalty', { prompt: 'a', presence_penalty: 0.5 }, /penalties/, 'presence_penalty'],
  ['logit_bias', { prompt: 'a', logit_bias: { '50256': -100 } }, /logit biases/, 'logit_bias'],
  ['suffix', { prompt: 'a', suffix: 'b' }, /suffix/, 'suffix'],
  ['an unknown parameter', { prompt: 'a', messages: [] }, /not a Completions parameter/, 'messages'],
];
for (const [name, body, message, param] of BAD) {
  test(`400 in OpenAI's error format: ${name}`, () => assertOpenAiBadRequest(`${h.proxy.url}/v1/completions`, body, message, param));
}
