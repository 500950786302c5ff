// The Python `openai` package (PyPI, pinned, in a venv) calls the proxy with the real trainer and store
// behind it: plain and rollout-scoped, streamed and not; the scoped calls leave spans in the store.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { ensureVenv } from '../helpers/python';
import { startStack } from './proxy-harness';
import type { Stack } from './proxy-harness';

const run = promisify(execFile);
const OPENAI_PY = 'openai==2.8.1';

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(() => stack.close());

test('Python openai client: plain, scoped, streamed; spans recorded', { timeout: 600_000 }, async () => {
  const venv = await ensureVenv('proxy-openai', [OPENAI_PY]);
  const { rolloutId, attemptId } = await stack.newAttempt();
  const scoped = `${stack.proxy.url}/rollout/${rolloutId}/attempt/${attemptId}/v1`;
  const { stdout } = await run(venv.python, [path.join(__dirname, 'proxy-openai.py'), `${stack.proxy.url}/v1`, scoped], {
    timeout: 120_000,
    maxBuffer: 16 << 20,
  }).catch((err: { stderr?: string; message: string }) => {
    throw new Error(`proxy-openai.py failed: ${err.message}\n${err.stderr ?? ''}`);
  });
  const r = JSON.parse(stdout.trim().split('\n').at(-1)!);
  assert.equal(r.openai_version, '2.8.1');
  assert.deepEqual(r.models, ['local/bigram']);
  assert.equal(r.plain.n, 2);
  assert.equal(r.plain.prompt_token_ids[0], 256);
  r.plain.token_ids.forEach((ids: number[], i: number) => {
    assert.ok(ids.length > 0 && ids.length <= 12);
    assert.equal(r.plain.logprobs[i].length, ids.length);
  });
  assert.ok(r.scoped.token_ids.length > 0 && r.scoped.token_ids.length <= 10);
  assert.ok(r.stream.chunks >= 3);
  assert.deepEqual(r.stream.prompt_token_ids, r.plain.prompt_token_ids);
  assert.equal(r.stream.logprobs, r.stream.token_ids.length);
  assert.equal(r.stream.usage.completion_tokens, r.stream.token_ids.length);
  assert.ok(r.plain_stream.chunks >= 2);
  assert.ok(r.plain_stream.token_ids.length > 0 && r.plain_stream.token_ids.length <= 8);
  assert.deepEqual(r.plain_stream.prompt_token_ids, r.plain.prompt_token_ids);
  assert.equal(r.bad_request.status, 400);
  assert.match(r.bad_request.message, /n must be at least 1/);

  const spans = await stack.spans(rolloutId);
  assert.equal(spans.length, 2, 'one span per scoped call');
  assert.equal(spans[0].attributes['gen_ai.response.id'], r.scoped.id);
  assert.deepEqual(spans[0].attributes.response_token_ids, r.scoped.token_ids);
  assert.deepEqual(spans[1].attributes.response_token_ids, r.stream.token_ids);
  assert.equal(spans[1].attributes['gen_ai.completion.0.content'], r.stream.text);
  assert.ok(spans[0].sequence_id < spans[1].sequence_id);
});
