// The official `openai` npm client calls the proxy (real trainer and store behind it): plain and
// rollout-scoped base URLs, with and without /v1, streamed and not.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startStack } from './proxy-harness';
import type { Stack } from './proxy-harness';

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(() => stack.close());

const MESSAGES = [
  { role: 'system' as const, content: 'Be brief.' },
  { role: 'user' as const, content: 'Say hello.' },
];

function checkChoice(c: any): void {
  assert.ok(Array.isArray(c.token_ids) && c.token_ids.length > 0);
  assert.equal(c.logprobs.content.length, c.token_ids.length);
  assert.ok(['stop', 'length'].includes(c.finish_reason));
}

test('plain base URL: models, non-streamed completion with token ids and logprobs', async () => {
  const client = new OpenAI({ baseURL: `${stack.proxy.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const models = await client.models.list();
  assert.deepEqual(models.data.map((m) => m.id), ['local/bigram']);
  assert.equal((await client.models.retrieve('local/bigram')).id, 'local/bigram');
  await assert.rejects(client.models.retrieve('gpt-4o'), (err: any) => err instanceof OpenAI.NotFoundError);
  const res = await client.chat.completions.create({ model: 'local/bigram', messages: MESSAGES, temperature: 0, max_tokens: 16, n: 2, seed: 3 });
  assert.equal(res.choices.length, 2);
  const raw = res as any;
  assert.equal(raw.prompt_token_ids[0], 256);
  res.choices.forEach(checkChoice);
  assert.equal(res.usage?.prompt_tokens, raw.prompt_token_ids.length);
  // Plain and streamed, through the library's stream helper that accumulates the final message.
  const runner = client.chat.completions.stream({ model: 'local/bigram', messages: MESSAGES, max_tokens: 8 });
  const final = await runner.finalChatCompletion();
  assert.equal(final.choices[0].message.role, 'assistant');
  assert.ok(['stop', 'length'].includes(final.choices[0].finish_reason));
});

test('rollout-scoped base URL, streamed: deltas add up to the text, last chunk has ids; one span', async () => {
  const { rolloutId, attemptId } = await stack.newAttempt();
  const client = new OpenAI({ baseURL: `${stack.proxy.url}/rollout/${rolloutId}/attempt/${attemptId}/v1`, apiKey: 'unused', maxRetries: 0 });
  const stream = await client.chat.completions.create({ model: 'local/bigram', messages: MESSAGES, stream: true, stream_options: { include_usage: true }, max_completion_tokens: 20 });
  const chunks: any[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  const text = chunks.flatMap((c) => c.choices.map((ch: any) => ch.delta?.content ?? '')).join('');
  const last = chunks.at(-1);
  assert.ok(Array.isArray(last.prompt_token_ids));
  checkChoice(last.choices[0]);
  assert.ok(last.usage.completion_tokens > 0);
  const spans = await stack.spans(rolloutId);
  assert.equal(spans.length, 1);
  assert.equal(spans[0].attempt_id, attemptId);
  assert.deepEqual(spans[0].attributes.response_token_ids, last.choices[0].token_ids);
  assert.equal(spans[0].attributes['gen_ai.completion.0.content'], text);
});

test('rollout-scoped base URL without /v1 (as Agent-lightning resources give it), non-streamed', async () => {
  const { rolloutId, attemptId } = await stack.newAttempt();
  const client = new OpenAI({ baseURL: `${stack.proxy.url}/rollout/${rolloutId}/attempt/${attemptId}`, apiKey: 'unused', maxRetries: 0 });
  const res = await client.chat.completions.create({ model: 'local/bigram', messages: MESSAGES, top_p: 0.9 });
  checkChoice(res.choices[0]);
  const spans = await stack.spans(rolloutId);
  assert.equal(spans.length, 1);
  assert.equal(spans[0].attributes['gen_ai.response.id'], res.id);
});

test('a bad request surfaces as the client library\'s BadRequestError with the proxy message', async () => {
  const client = new OpenAI({ baseURL: `${stack.proxy.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  await assert.rejects(
    client.chat.completions.create({ model: 'local/bigram', messages: MESSAGES, temperature: 5 }),
    (err: any) => err instanceof OpenAI.BadRequestError && /temperature must be/.test(err.message),
  );
});
