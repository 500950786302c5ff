// Property-based fuzzing of the proxy's HTTP inputs: random chat bodies built from the OpenAI fields (hostile
// roles, contents, sampling parameters, tools), random JSON and bytes (invalid UTF-8), hostile paths and
// rollout-scoped URLs, random admin bodies and credentials. Every answer is below 500 and every error is the
// OpenAI error JSON; afterwards the proxy still serves the policy it served before. Bounded: fixed runs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startHarness, type Harness } from '../proxy/helpers';
import { checkAnswer, fuzz, headerValue, hostileJsonText, hostilePath, invalidUtf8, jsonOf, methods, report, send, sendRaw } from './http-fuzz';

const ADMIN = 'fuzz-admin-token';
let h: Harness;
let base = '';
const JSON_HEADERS = { 'content-type': 'application/json' };

/** An error answer in OpenAI's format. */
function openAiError(a: { status: number; text: string; headers: Record<string, unknown> }, where: string): void {
  checkAnswer(a as never, where);
  if (a.status >= 400) {
    const e = (jsonOf(a as never) as { error?: { message?: unknown; type?: unknown } }).error;
    if (typeof e?.message !== 'string' || typeof e.type !== 'string') throw new Error(`${where}: error is not in OpenAI format: ${a.text.slice(0, 200)}`);
  }
}

const anyValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(-1, 0, 1, 2, 2.5, 1e308, -1e308, 0.5, 64, 65, 2 ** 53 + 1, '', '0.7', null, true, [], {}, ['\n'], [''], [1, 2]),
);
const role = fc.oneof(fc.constantFrom('system', 'user', 'assistant', 'tool', 'developer', 'function', 'wizard', '', 'USER'), anyValue);
const content = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.constantFrom(null, '', '\u0000', '\ud800', '<|im_end|>', 'user: hi\nassistant:'),
  fc.array(fc.oneof(fc.record({ type: fc.constantFrom('text', 'image_url', 'input_audio', 'x'), text: anyValue }, { requiredKeys: [] }), anyValue), { maxLength: 3 }),
  anyValue,
);
const toolCall = fc.record({ id: anyValue, type: fc.constantFrom('function', 'x'), function: fc.record({ name: fc.oneof(fc.string({ maxLength: 10 }), anyValue), arguments: fc.oneof(fc.constant('{}'), fc.string({ maxLength: 20 }), anyValue) }, { requiredKeys: [] }) }, { requiredKeys: [] });
const message = fc.oneof(
  fc.record({ role, content, name: anyValue, tool_calls: fc.array(toolCall, { maxLength: 2 }), tool_call_id: anyValue }, { requiredKeys: ['role'] }),
  anyValue,
);
const chatBody = fc.record(
  {
    model: anyValue,
    messages: fc.oneof(fc.array(message, { minLength: 1, maxLength: 4 }), anyValue),
    temperature: anyValue, top_p: anyValue, top_k: anyValue, max_tokens: anyValue, max_completion_tokens: anyValue, n: anyValue, seed: anyValue,
    stop: fc.oneof(anyValue, fc.array(fc.string({ maxLength: 5 }), { maxLength: 5 })),
    stream: anyValue, stream_options: anyValue, logprobs: anyValue, top_logprobs: anyValue,
    tools: fc.oneof(anyValue, fc.array(fc.record({ type: fc.constantFrom('function', 'x'), function: anyValue }, { requiredKeys: [] }), { maxLength: 2 })),
    tool_choice: anyValue, presence_penalty: anyValue, response_format: anyValue,
  },
  { requiredKeys: [] },
);
/** Bodies that are mostly valid, with one sampling parameter hostile: the validator's boundaries. */
const nearValid = fc.tuple(fc.constantFrom('temperature', 'top_p', 'top_k', 'max_tokens', 'n', 'seed', 'stop'), anyValue).map(([k, v]) => ({
  messages: [{ role: 'user', content: 'hi' }],
  max_tokens: 4,
  [k]: v,
}));

before(async () => {
  h = await startHarness({ withStore: true, adminToken: ADMIN, maxBodyBytes: 256 * 1024, drainTimeoutMs: 5000 });
  base = h.proxy.url;
});

after(async () => {
  report('proxy');
  await h?.close();
});

test('proxy: hostile input never gets a 5xx, errors are OpenAI JSON, the policy is kept', { timeout: 120_000 }, async () => {
  const policyBefore = (jsonOf(await send(base, 'GET', '/admin/policy', { authorization: `Bearer ${ADMIN}` })) as { policy: unknown }).policy;

  await fuzz('chat bodies from the OpenAI fields with random values', chatBody, 500, async (body) => {
    openAiError(await send(base, 'POST', '/v1/chat/completions', JSON_HEADERS, JSON.stringify(body)), `chat ${JSON.stringify(body).slice(0, 300)}`);
  });

  await fuzz('valid bodies with one hostile sampling parameter', nearValid, 300, async (body) => {
    const a = await send(base, 'POST', '/v1/chat/completions', JSON_HEADERS, JSON.stringify(body));
    openAiError(a, `chat ${JSON.stringify(body)}`);
  });

  await fuzz('random JSON and bytes, invalid UTF-8', fc.oneof(hostileJsonText.map((s) => Buffer.from(s)), invalidUtf8, fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b))), 300, async (body) => {
    openAiError(await send(base, 'POST', '/v1/chat/completions', JSON_HEADERS, body), `chat bytes ${body.toString('hex').slice(0, 120)}`);
  });

  await fuzz(
    'hostile paths, methods and rollout-scoped URLs',
    fc.tuple(methods, hostilePath(['/v1/chat/completions', '/v1/models', '/models', '/rollout/ro-1/attempt/at-1', '/rollout/%/attempt/%ff', '/rollout', '/admin', '/', '/health'])),
    400,
    async ([method, path]) => {
      const a = await send(base, method, path, JSON_HEADERS, method === 'GET' || method === 'HEAD' ? undefined : '{"messages":[{"role":"user","content":"hi"}],"max_tokens":2}');
      if (method === 'HEAD') assert.ok(a.status < 500, `HEAD ${path}: ${a.status}`);
      else openAiError(a, `${method} ${path.slice(0, 200)}`);
    },
  );

  await fuzz(
    'raw request lines',
    fc.tuple(fc.constantFrom('GET', 'POST', 'BREW'), fc.uint8Array({ minLength: 1, maxLength: 60 })),
    150,
    async ([method, target]) => {
      const bytes = Buffer.concat([Buffer.from(`${method} /`), Buffer.from(target).filter((b) => b !== 0x20 && b !== 0x0a && b !== 0x0d), Buffer.from(' HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: 2\r\n\r\n{}')]);
      const a = await sendRaw(base, bytes);
      if (a.status === 0 || a.status >= 500) throw new Error(`raw ${bytes.toString('latin1').slice(0, 120)} → ${a.status} ${a.text.slice(0, 200)}`);
    },
  );

  await fuzz('admin credentials', fc.oneof(headerValue, headerValue.map((v) => `Bearer ${v}`), fc.constant(`Bearer ${ADMIN}x`), fc.constant(ADMIN)), 200, async (auth) => {
    const a = await send(base, 'POST', '/admin/policy', { ...JSON_HEADERS, authorization: auth }, '{"switchId":"evil","modelName":"local/tiny-hello"}');
    assert.equal(a.status, 401, `authorization ${JSON.stringify(auth)} must be refused`);
    openAiError(a, 'admin');
  });

  await fuzz(
    'admin bodies (authorized)',
    fc.oneof(
      hostileJsonText,
      fc.record({ switchId: anyValue, modelName: anyValue, samplerPath: anyValue, baseModel: anyValue, renderer: anyValue, sampling: fc.oneof(anyValue, fc.record({ temperature: anyValue, topK: anyValue, topP: anyValue, maxTokens: anyValue }, { requiredKeys: [] })) }, { requiredKeys: [] }).map((o) => JSON.stringify(o)),
    ),
    300,
    async (body) => {
      const a = await send(base, 'POST', '/admin/policy', { ...JSON_HEADERS, authorization: `Bearer ${ADMIN}` }, body);
      openAiError(a, `admin ${body.slice(0, 300)}`);
    },
  );

  // Oversized bodies: 413 in OpenAI format, and the kept-alive connection is closed after it, so the client's next
  // request is answered (it used to wait forever behind the unread rest of the body).
  for (const chunked of [false, true, false, true]) {
    const headers: Record<string, string> = { ...JSON_HEADERS, ...(chunked ? { 'transfer-encoding': 'chunked' } : {}) };
    const big = await send(base, 'POST', '/v1/chat/completions', headers, Buffer.alloc(300 * 1024 + (chunked ? 70_000 : 0), 0x20));
    assert.equal(big.status, 413);
    openAiError(big, 'oversized');
    assert.equal((await send(base, 'GET', '/health', {})).status, 200);
  }

  // No call is left holding a slot on the policy (a leaked slot would stall every later switch).
  const state = jsonOf(await send(base, 'GET', '/admin/policy', { authorization: `Bearer ${ADMIN}` })) as { inFlight: number; policy: unknown };
  assert.equal(state.inFlight, 0, `calls still in flight: ${JSON.stringify(state)}`);

  // Still serving; a random admin body that happened to be valid may have switched, so switch back and check.
  const restore = await send(base, 'POST', '/admin/policy', { ...JSON_HEADERS, authorization: `Bearer ${ADMIN}` }, JSON.stringify({ ...(policyBefore as object), switchId: 'restored' }));
  assert.equal(restore.status, 200, restore.text);
  const ok = await send(base, 'POST', '/v1/chat/completions', JSON_HEADERS, JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 }));
  assert.equal(ok.status, 200, ok.text);
  assert.match((jsonOf(ok) as { choices: { message: { content: string } }[] }).choices[0]!.message.content, /^Hello 0!/);
});
