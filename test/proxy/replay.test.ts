// The recorded answer of a call is rebuilt from its span exactly as it was sent (the replay a client's retry
// gets), and the request fingerprint tells identical requests from different ones.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getRenderer, getTokenizer } from '../../chat';
import { buildAnswer, type InternalAnswer } from '../../proxy/answer';
import { chatCompletionOf } from '../../proxy/apis/chat';
import { answerFromSpan } from '../../proxy/recorded';
import { completionFromSpan, requestFingerprint } from '../../proxy/replay';
import { parseChatRequest } from '../../proxy/request';
import { buildSpan } from '../../proxy/span';

const MODEL = 'Qwen/Qwen3-4B-Instruct-2507';
const tokenizer = getTokenizer(MODEL);
const renderer = getRenderer('qwen3_instruct', tokenizer);

function spanOf(answer: InternalAnswer, n: number) {
  return buildSpan({
    rolloutId: 'ro-1', attemptId: 'at-1', sequenceId: 3, startTime: 1000.2, endTime: 1001.7,
    call: { api: 'chat', model: MODEL, messages: [{ role: 'user', content: 'What is the weather?' }], prompt: null },
    sampling: { temperature: 0.7, topP: 1, topK: -1, maxTokens: 64, seed: 5, n, stream: false },
    policy: { switchId: 'p1', modelName: MODEL, baseModel: MODEL, renderer: 'qwen3_instruct', sampling: { temperature: 0.7, topP: 1, topK: -1, maxTokens: 64 } },
    answer, error: null, fingerprint: 'f'.repeat(32),
  });
}

test('an answer with text, a tool call, a length cut and a user stop comes back from its span unchanged', () => {
  const seq = (text: string, stopReason: 'stop' | 'length') => {
    const tokens = [...tokenizer.encode(text), ...(stopReason === 'stop' ? [tokenizer.encode('<|im_end|>')[0]!] : [])];
    return { tokens, logprobs: tokens.map((_, i) => -0.25 * (i + 1)), stopReason };
  };
  const answer = buildAnswer({
    id: 'chatcmpl-abc',
    model: MODEL,
    created: 1001,
    promptTokens: tokenizer.encode('<|im_start|>user\nWhat is the weather?<|im_end|>\n<|im_start|>assistant\n'),
    sequences: [
      seq('Sunny, 21°C ☀', 'stop'),
      seq('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>', 'stop'),
      seq('It depends on where', 'length'),
      seq('Rain. STOP and more', 'length'),
    ],
    renderer,
    userStops: ['STOP'],
    raw: false,
    toolCallIdPrefix: 'tinker-tool-call-',
  });
  assert.equal(answer.choices[1]!.finishReason, 'tool_calls', 'the fixture really has a tool call');
  assert.equal(answer.choices[3]!.message.content, 'Rain. ', 'and a user stop');
  assert.equal(answer.choices[3]!.stopSequence, 'STOP');
  assert.deepEqual(completionFromSpan(spanOf(answer, 4), tokenizer), chatCompletionOf(answer), 'the chat completion');
  assert.deepEqual(answerFromSpan(spanOf(answer, 4), tokenizer), answer, 'the internal answer every API prints, stop strings included');
});

test('a span that failed or lacks the answer gives no replay', () => {
  const answer = buildAnswer({
    id: 'x', model: MODEL, created: 1, promptTokens: [1, 2], sequences: [{ tokens: [3], logprobs: [-1], stopReason: 'length' }], renderer, userStops: [], raw: false, toolCallIdPrefix: 'c',
  });
  const failed = { ...spanOf(answer, 1), status: { status_code: 'ERROR' as const, description: 'boom' } };
  assert.equal(completionFromSpan(failed, tokenizer), null);
  const partial = spanOf(answer, 1);
  delete partial.attributes['agl.completion.0.token_ids'];
  assert.equal(completionFromSpan(partial, tokenizer), null);
});

test('the fingerprint follows what is asked, not how the JSON was spelled', () => {
  const base = { messages: [{ role: 'user', content: 'hi' }], temperature: 0.5 };
  const fp = (body: unknown) => requestFingerprint(parseChatRequest(body));
  assert.equal(fp(base), fp({ temperature: 0.5, messages: [{ content: 'hi', role: 'user' }] }));
  assert.equal(fp(base), fp({ ...base, stream: true }), 'streaming does not change the answer');
  assert.notEqual(fp(base), fp({ ...base, messages: [{ role: 'user', content: 'hi!' }] }));
  assert.notEqual(fp(base), fp({ ...base, temperature: 0.6 }));
  assert.notEqual(fp(base), fp({ ...base, seed: 1 }));
  assert.notEqual(fp(base), fp({ ...base, n: 2 }));
});
