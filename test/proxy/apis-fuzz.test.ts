// Property-based fuzzing of the Responses, Messages and Completions front doors (as test/fuzz/proxy.test.ts does
// chat): bodies built from each API's fields with random values, on a policy that can show tools (role_colon_tools) and on
// one that cannot (llama3). Every answer is below 500, every error is JSON in the called API's own format, and
// the proxy keeps serving. Bounded: fixed runs, FUZZ_SEED replays.
import { test, before, after } from 'node:test';
import fc from 'fast-check';
import { checkAnswer, fuzz, jsonOf, report, send } from '../fuzz/http-fuzz';
import { policy, startHarness, type Harness } from './helpers';

let roleColon: Harness;
let llama: Harness;
before(async () => {
  roleColon = await startHarness({ withStore: true, maxBodyBytes: 256 * 1024, initial: policy({ renderer: 'role_colon_tools' }) });
  llama = await startHarness({ initial: policy({ switchId: 'l', modelName: 'meta-llama/Llama-3.1-8B-Instruct', baseModel: 'meta-llama/Llama-3.1-8B-Instruct', renderer: 'llama3' }) });
});
after(async () => {
  report('proxy agent APIs');
  await roleColon?.close();
  await llama?.close();
});

const any = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(-1, 0, 1, 2, 1.5, 1e308, 65, '', 'x', null, true, [], {}, [1, 2], '\ud800', '<tool_call>{"name": "f", "args": {}}</tool_call>'),
);
const text = fc.oneof(fc.string({ maxLength: 40 }), any);
const part = fc.record({ type: fc.constantFrom('input_text', 'output_text', 'text', 'input_image', 'refusal', 'x'), text, refusal: text }, { requiredKeys: [] });
const item = fc.oneof(
  fc.record({ type: fc.constantFrom('message', undefined), role: fc.constantFrom('user', 'assistant', 'system', 'developer', 'tool', 'x'), content: fc.oneof(text, fc.array(part, { maxLength: 2 })) }, { requiredKeys: ['role'] }),
  fc.record({ type: fc.constant('function_call'), call_id: text, name: text, arguments: fc.oneof(fc.constant('{"a": 1}'), text) }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constant('function_call_output'), call_id: text, output: fc.oneof(text, fc.array(part, { maxLength: 2 })) }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constantFrom('reasoning', 'item_reference', 'x'), id: text }),
  any,
);
const fnTool = fc.record({ type: fc.constantFrom('function', 'web_search', 'x'), name: text, description: text, parameters: any, strict: any }, { requiredKeys: ['type'] });
const responsesBody = fc.record(
  {
    model: any, input: fc.oneof(text, fc.array(item, { maxLength: 4 })), instructions: text, tools: fc.oneof(any, fc.array(fnTool, { maxLength: 2 })),
    tool_choice: fc.oneof(any, fc.constantFrom('auto', 'none', 'required')), max_output_tokens: any, temperature: any, top_p: any, top_k: any, seed: any,
    stream: any, store: any, previous_response_id: fc.oneof(text, fc.constant(`resp_${'0'.repeat(32)}`)), include: any, text: any, reasoning: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: any }), // a reasoning setting the renderer does not render is a 400 by design
    truncation: any, metadata: any, parallel_tool_calls: any, bogus: any,
  },
  { requiredKeys: [] },
);
const block = fc.oneof(
  fc.record({ type: fc.constant('text'), text }),
  fc.record({ type: fc.constant('tool_use'), id: text, name: text, input: any }),
  fc.record({ type: fc.constant('tool_result'), tool_use_id: text, content: fc.oneof(text, fc.array(fc.record({ type: fc.constantFrom('text', 'image'), text }), { maxLength: 2 })), is_error: any }),
  fc.record({ type: fc.constantFrom('image', 'thinking', 'document', 'x') }),
  any,
);
const messagesBody = fc.record(
  {
    model: any, max_tokens: any, system: fc.oneof(text, fc.array(block, { maxLength: 2 })),
    messages: fc.oneof(any, fc.array(fc.record({ role: fc.constantFrom('user', 'assistant', 'system', 'x'), content: fc.oneof(text, fc.array(block, { maxLength: 3 })) }, { requiredKeys: [] }), { minLength: 1, maxLength: 4 })),
    tools: fc.oneof(any, fc.array(fc.record({ name: text, input_schema: any, type: any, description: text }, { requiredKeys: [] }), { maxLength: 2 })),
    tool_choice: any, stop_sequences: any, temperature: any, top_p: any, top_k: any, stream: any, thinking: any, metadata: any,
  },
  { requiredKeys: [] },
);
const completionsBody = fc.record(
  {
    model: any, prompt: fc.oneof(text, fc.array(fc.integer({ min: -5, max: 300 }), { maxLength: 6 }), fc.array(text, { maxLength: 3 })), max_tokens: any,
    n: any, stop: any, temperature: any, top_p: any, top_k: any, seed: any, stream: any, stream_options: any, logprobs: any, echo: any, best_of: any,
    presence_penalty: any, logit_bias: any, suffix: any, bogus: any,
  },
  { requiredKeys: [] },
);

function answered(a: { status: number; text: string; headers: Record<string, unknown> }, anthropic: boolean, where: string): void {
  checkAnswer(a as never, where);
  if (a.status < 400) return;
  const body = jsonOf(a as never) as { type?: unknown; error?: { message?: unknown; type?: unknown } };
  const ok = typeof body.error?.message === 'string' && typeof body.error.type === 'string' && (!anthropic || body.type === 'error');
  if (!ok) throw new Error(`${where}: error not in the API's format: ${a.text.slice(0, 200)}`);
}

/** A valid body with one field set to a hostile value: the validators' boundaries, and deeper paths than random bodies reach. */
function nearValid(valid: Record<string, unknown>, keys: string[], inner: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.oneof(fc.tuple(fc.constantFrom(...keys), any).map(([k, v]) => ({ ...valid, [k]: v })), inner.map((v) => ({ ...valid, ...(v as object) })));
}
const responsesNear = nearValid({ input: 'hi', max_output_tokens: 8 }, ['input', 'instructions', 'tools', 'tool_choice', 'max_output_tokens', 'temperature', 'top_p', 'top_k', 'seed', 'stream', 'store', 'previous_response_id'],
  fc.record({ input: fc.array(item, { minLength: 1, maxLength: 4 }), tools: fc.array(fnTool, { maxLength: 2 }) }, { requiredKeys: ['input'] }));
const messagesNear = nearValid({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }, ['system', 'messages', 'tools', 'tool_choice', 'max_tokens', 'stop_sequences', 'temperature', 'top_p', 'top_k', 'stream'],
  fc.record({ messages: fc.array(fc.record({ role: fc.constantFrom('user', 'assistant'), content: fc.array(block, { minLength: 1, maxLength: 3 }) }), { minLength: 1, maxLength: 4 }) }));
const completionsNear = nearValid({ prompt: 'hi', max_tokens: 8 }, ['prompt', 'max_tokens', 'n', 'stop', 'temperature', 'top_p', 'top_k', 'seed', 'stream', 'logprobs', 'best_of'],
  fc.record({ prompt: fc.array(fc.integer({ min: -5, max: 300 }), { minLength: 1, maxLength: 6 }) }));

/** Three in four bodies near a valid one: fully random bodies mostly stop at the first check, and the fuzz must also reach sampling. */
const nearMostly = (random: fc.Arbitrary<unknown>, near: fc.Arbitrary<unknown>) => fc.oneof({ weight: 1, arbitrary: random }, { weight: 3, arbitrary: near });
const JSON_HEADERS = { 'content-type': 'application/json' };
const cases: [string, string, fc.Arbitrary<unknown>, boolean][] = [
  ['Responses', '/v1/responses', nearMostly(responsesBody, responsesNear), false],
  ['Messages', '/v1/messages', nearMostly(messagesBody, messagesNear), true],
  ['Completions', '/v1/completions', nearMostly(completionsBody, completionsNear), false],
];
/** How often each API answered 200 (a fuzz that only ever reaches the first check would prove little). */
const served: Record<string, number> = {};

test('agent APIs: hostile bodies never get a 5xx, errors are in each API’s format, the proxy keeps serving', { timeout: 180_000 }, async () => {
  for (const [name, path, body, anthropic] of cases) {
    await fuzz(`${name} bodies from its fields with random values`, fc.tuple(body, fc.boolean()), 250, async ([b, onLlama]) => {
      const base = (onLlama ? llama : roleColon).proxy.url;
      const a = await send(base, 'POST', path, JSON_HEADERS, JSON.stringify(b));
      answered(a, anthropic, `${name} ${JSON.stringify(b).slice(0, 300)}`);
      if (a.status === 200) served[name] = (served[name] ?? 0) + 1;
    });
    console.log(`# ${name}: ${served[name] ?? 0} of 250 bodies served`);
    // 14-29 of 250 for Messages over 16 seeds (the fewest of the three); 5 leaves room for any seed, 0 is the failure this catches.
    if (!((served[name] ?? 0) >= 5)) throw new Error(`${name}: only ${served[name] ?? 0} of 250 bodies were served; the fuzz does not reach sampling`);
    answered(await send(roleColon.proxy.url, 'POST', path, JSON_HEADERS, '{nope'), anthropic, `${name} invalid JSON`);
  }
  const ok = await send(roleColon.proxy.url, 'POST', '/v1/responses', JSON_HEADERS, JSON.stringify({ input: 'still there?' }));
  if (ok.status !== 200) throw new Error(`the proxy stopped serving: ${ok.status} ${ok.text}`);
});
