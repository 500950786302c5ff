// Reasoning settings through every front door, over real HTTP: a setting the run's renderer already renders
// (Responses reasoning.effort, Chat reasoning_effort / chat_template_kwargs, Anthropic thinking and
// output_config.effort) is served, and the prompt the sampler received is exactly the renderer's generation prompt;
// any other is a 400 in that API's error format naming the run's renderer, what it renders, and the renderer that
// renders what was asked, and nothing is sampled. Responses and chat usage count the reasoning tokens. Also the
// official `openai` npm client sending reasoning: {effort} on Responses.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { getRenderer, getTokenizer, toInts, type Message, type ToolSpec } from '../../chat';
import { withToolDeclarations } from '../../chat/tools';
import { ScriptedSamplerFactory } from '../../proxy/fake-sampler';
import { policy, post, startHarness, type Harness } from './helpers';

interface Run {
  model: string;
  renderer: string;
  /** What the model writes: reasoning, then an answer, in the family's format. */
  reply: string;
  /** The reply's reasoning as its own tokens: the text up to the reasoning's end. */
  reasoningText: string;
}

const GPT_OSS: Run = {
  model: 'openai/gpt-oss-20b',
  renderer: 'gpt_oss_medium_reasoning',
  reply: '<|channel|>analysis<|message|>Two and two make four.<|end|><|start|>assistant<|channel|>final<|message|>4',
  reasoningText: '<|channel|>analysis<|message|>Two and two make four.',
};
const DEEPSEEK: Run = {
  model: 'deepseek-ai/DeepSeek-V4.1-Flash',
  renderer: 'deepseekv4_1',
  reply: 'Two and two make four.</think>4',
  reasoningText: 'Two and two make four.',
};
const PLAIN: Run = { model: 'local/tiny-hello', renderer: 'role_colon', reply: 'four', reasoningText: '' };

const runs = [GPT_OSS, DEEPSEEK, PLAIN];
const harnesses = new Map<string, Harness>();
/** The prompts each run's sampler was asked to continue, in order. */
const sampled = new Map<string, number[][]>();

before(async () => {
  for (const r of runs) {
    const prompts: number[][] = [];
    sampled.set(r.renderer, prompts);
    const factory = new ScriptedSamplerFactory(() => r.renderer, (prompt) => {
      prompts.push([...prompt]);
      return r.reply;
    });
    harnesses.set(r.renderer, await startHarness({ factory, initial: policy({ switchId: r.renderer, modelName: r.model, baseModel: r.model, renderer: r.renderer }) }));
  }
});
after(async () => {
  for (const h of harnesses.values()) await h.close();
});

const question: Message[] = [{ role: 'user', content: 'What is 2+2?' }];
const THOUGHT = 'Two and two make four.';
const url = (r: Run, path: string) => `${harnesses.get(r.renderer)!.proxy.url}${path}`;
function expectedPrompt(r: Run, messages: Message[] = question, tools: ToolSpec[] = []): number[] {
  const renderer = getRenderer(r.renderer, getTokenizer(r.model));
  return toInts(renderer.buildGenerationPrompt(tools.length ? withToolDeclarations(renderer, messages, tools) : messages));
}
const reasoningTokens = (r: Run) => getTokenizer(r.model).encode(r.reasoningText).length;

/** Posts `body` and checks what the sampler received: the renderer's prompt when served, nothing when refused. */
async function call(r: Run, path: string, body: unknown, expected: Message[] = question, tools: ToolSpec[] = []) {
  const before = sampled.get(r.renderer)!.length;
  const res = await post(url(r, path), body);
  const prompts = sampled.get(r.renderer)!.slice(before);
  if (res.status === 200) {
    assert.equal(prompts.length, 1, 'one sample');
    assert.deepEqual(prompts[0], expectedPrompt(r, expected, tools), 'the sampler was sent the renderer\'s own generation prompt');
    assert.deepEqual(res.json.prompt_token_ids, prompts[0]);
  } else {
    assert.equal(prompts.length, 0, `a refused call samples nothing: ${res.text}`);
  }
  return res;
}

function openAiRefusal(res: { status: number; json: any; text: string }, param: string, message: RegExp): void {
  assert.equal(res.status, 400, res.text);
  assert.equal(res.json.error.type, 'invalid_request_error');
  assert.equal(res.json.error.param, param);
  assert.match(res.json.error.message, message);
  assert.ok(!res.json.error.message.includes('\n'), 'one line');
}

function anthropicRefusal(res: { status: number; json: any; text: string }, message: RegExp): void {
  assert.equal(res.status, 400, res.text);
  assert.equal(res.json.type, 'error');
  assert.equal(res.json.error.type, 'invalid_request_error');
  assert.match(res.json.error.message, message);
  assert.ok(!res.json.error.message.includes('\n'), 'one line');
}

// ---- Responses ----

test('Responses: the effort gpt_oss_medium_reasoning renders is served, with a reasoning item and its token count', async () => {
  const res = await call(GPT_OSS, '/v1/responses', { input: 'What is 2+2?', reasoning: { effort: 'medium', summary: 'auto' } });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.json.output.map((i: any) => i.type), ['reasoning', 'message']);
  assert.equal(res.json.output[0].content[0].text, 'Two and two make four.');
  assert.deepEqual(res.json.output[0].summary, [], 'summary is display-only: accepted, none produced');
  assert.deepEqual(res.json.reasoning, { effort: 'medium', summary: 'auto' });
  assert.equal(res.json.usage.output_tokens_details.reasoning_tokens, reasoningTokens(GPT_OSS));
  assert.ok(res.json.usage.output_tokens_details.reasoning_tokens < res.json.usage.output_tokens);
});

test('Responses: without a reasoning setting the response says the effort the renderer renders', async () => {
  const res = await call(GPT_OSS, '/v1/responses', { input: 'What is 2+2?' });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.json.reasoning, { effort: 'medium', summary: null });
});

test('Responses: another effort is a 400 naming the run\'s renderer, its effort and the renderer that renders the asked one', async () => {
  const res = await call(GPT_OSS, '/v1/responses', { input: 'What is 2+2?', reasoning: { effort: 'high' } });
  openAiRefusal(res, 'reasoning.effort', /reasoning effort high cannot be honoured: the run's renderer gpt_oss_medium_reasoning renders reasoning effort medium.*renderer gpt_oss_high_reasoning \(not among openai\/gpt-oss-20b's recommended renderers\) renders reasoning effort high/);
});

test('Responses: effort none on a renderer that always reasons is refused; no gpt-oss renderer turns reasoning off', async () => {
  const res = await call(GPT_OSS, '/v1/responses', { input: 'What is 2+2?', reasoning: { effort: 'none' } });
  openAiRefusal(res, 'reasoning.effort', /gpt_oss_medium_reasoning renders reasoning effort medium.*no gpt_oss renderer renders no reasoning/);
});

test('Responses: effort none on a renderer without reasoning is served; an effort is refused', async () => {
  const ok = await call(PLAIN, '/v1/responses', { input: 'What is 2+2?', reasoning: { effort: 'none' } });
  assert.equal(ok.status, 200, ok.text);
  assert.equal(ok.json.usage.output_tokens_details.reasoning_tokens, 0);
  const no = await call(PLAIN, '/v1/responses', { input: 'What is 2+2?', reasoning: { effort: 'low' } });
  openAiRefusal(no, 'reasoning.effort', /the run's renderer role_colon renders no reasoning/);
});

test('Responses: a malformed reasoning setting is a 400 naming the field', async () => {
  openAiRefusal(await call(GPT_OSS, '/v1/responses', { input: 'x', reasoning: { effort: 'extreme' } }), 'reasoning.effort', /must be one of none, minimal, low, medium, high, xhigh, max/);
  openAiRefusal(await call(GPT_OSS, '/v1/responses', { input: 'x', reasoning: { effort: 'medium', budget: 3 } }), 'reasoning.budget', /not a reasoning setting/);
  openAiRefusal(await call(GPT_OSS, '/v1/responses', { input: 'x', reasoning: { summary: 'long' } }), 'reasoning.summary', /must be one of auto, concise, detailed/);
});

test('Responses through the official openai npm client: reasoning: {effort} served when it matches, BadRequestError when not', async () => {
  const client = new OpenAI({ baseURL: `${harnesses.get(GPT_OSS.renderer)!.proxy.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 20_000 });
  const before = sampled.get(GPT_OSS.renderer)!.length;
  const r = await client.responses.create({ model: GPT_OSS.model, input: 'What is 2+2?', reasoning: { effort: 'medium', summary: 'detailed' } });
  assert.deepEqual(sampled.get(GPT_OSS.renderer)!.slice(before), [expectedPrompt(GPT_OSS)]);
  assert.equal(r.output_text, '4');
  const item = r.output.find((i) => i.type === 'reasoning');
  assert.equal(item?.type === 'reasoning' ? item.content?.[0]?.text : undefined, 'Two and two make four.');
  assert.equal(r.usage?.output_tokens_details.reasoning_tokens, reasoningTokens(GPT_OSS));
  await assert.rejects(
    client.responses.create({ model: GPT_OSS.model, input: 'What is 2+2?', reasoning: { effort: 'low' } }),
    (err: unknown) => err instanceof OpenAI.BadRequestError && err.param === 'reasoning.effort' && /gpt_oss_low_reasoning/.test(err.message),
  );
});

// ---- Chat Completions ----

test('Chat: reasoning_effort high is what deepseekv4_1 renders: served, with the reasoning token count in usage', async () => {
  const res = await call(DEEPSEEK, '/v1/chat/completions', { messages: question, reasoning_effort: 'high' });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.choices[0].message.reasoning_content, 'Two and two make four.');
  assert.equal(res.json.choices[0].message.content, '4');
  assert.deepEqual(res.json.usage.completion_tokens_details, { reasoning_tokens: reasoningTokens(DEEPSEEK) });
});

test('Chat: reasoning_effort low on deepseekv4_1 is refused naming deepseekv4_1_low_reasoning', async () => {
  const res = await call(DEEPSEEK, '/v1/chat/completions', { messages: question, reasoning_effort: 'low' });
  openAiRefusal(res, 'reasoning_effort', /reasoning effort low cannot be honoured: the run's renderer deepseekv4_1 renders reasoning effort high.*renderer deepseekv4_1_low_reasoning renders reasoning effort low/);
});

test('Chat: xhigh asks for what deepseekv4_1_max_reasoning renders (its "max")', async () => {
  const res = await call(DEEPSEEK, '/v1/chat/completions', { messages: question, reasoning_effort: 'xhigh' });
  openAiRefusal(res, 'reasoning_effort', /renderer deepseekv4_1_max_reasoning renders reasoning effort xhigh/);
});

test('Chat: the template switch chat_template_kwargs.thinking=false is refused naming the disable_thinking renderer; true is served', async () => {
  const no = await call(DEEPSEEK, '/v1/chat/completions', { messages: question, chat_template_kwargs: { thinking: false } });
  openAiRefusal(no, 'chat_template_kwargs.thinking', /thinking off cannot be honoured: the run's renderer deepseekv4_1 renders reasoning effort high.*deepseekv4_1_disable_thinking renders thinking off/);
  const yes = await call(DEEPSEEK, '/v1/chat/completions', { messages: question, chat_template_kwargs: { thinking: true } });
  assert.equal(yes.status, 200, yes.text);
});

test('Chat: a renderer without reasoning takes reasoning_effort none and refuses an effort', async () => {
  const ok = await call(PLAIN, '/v1/chat/completions', { messages: question, reasoning_effort: 'none' });
  assert.equal(ok.status, 200, ok.text);
  assert.equal(ok.json.usage.completion_tokens_details, undefined, 'no reasoning, no reasoning count');
  openAiRefusal(await call(PLAIN, '/v1/chat/completions', { messages: question, reasoning_effort: 'medium' }), 'reasoning_effort', /role_colon renders no reasoning/);
});

// ---- Anthropic Messages ----

const ask = { model: DEEPSEEK.model, max_tokens: 4096, messages: question };

test('Messages: thinking enabled on a thinking renderer is served, with the thinking block', async () => {
  const res = await call(DEEPSEEK, '/v1/messages', { ...ask, thinking: { type: 'enabled', budget_tokens: 2048 } });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.json.content.map((b: any) => b.type), ['thinking', 'text']);
  assert.equal(res.json.content[0].thinking, 'Two and two make four.');
  const adaptive = await call(DEEPSEEK, '/v1/messages', { ...ask, thinking: { type: 'adaptive' } });
  assert.equal(adaptive.status, 200, adaptive.text);
});

test('Messages: output_config.effort high is what deepseekv4_1 renders; max is refused naming deepseekv4_1_max_reasoning', async () => {
  const ok = await call(DEEPSEEK, '/v1/messages', { ...ask, output_config: { effort: 'high' } });
  assert.equal(ok.status, 200, ok.text);
  anthropicRefusal(await call(DEEPSEEK, '/v1/messages', { ...ask, output_config: { effort: 'max' } }), /output_config.effort: reasoning effort max cannot be honoured: the run's renderer deepseekv4_1 .*deepseekv4_1_max_reasoning/);
  anthropicRefusal(await call(DEEPSEEK, '/v1/messages', { ...ask, output_config: { format: { type: 'json_schema' } } }), /output_config.format: not served/);
});

test('Messages: thinking disabled on a thinking renderer is refused in Anthropic\'s format naming the disable_thinking renderer', async () => {
  const res = await call(DEEPSEEK, '/v1/messages', { ...ask, thinking: { type: 'disabled' } });
  anthropicRefusal(res, /thinking: thinking off cannot be honoured: the run's renderer deepseekv4_1 renders reasoning effort high.*deepseekv4_1_disable_thinking renders thinking off/);
});

test('Messages through the official @anthropic-ai/sdk client: thinking enabled served with its thinking block, disabled a BadRequestError', async () => {
  const client = new Anthropic({ baseURL: harnesses.get(DEEPSEEK.renderer)!.proxy.url, apiKey: 'unused', maxRetries: 0, timeout: 20_000 });
  const m = await client.messages.create({ model: DEEPSEEK.model, max_tokens: 4096, messages: [{ role: 'user', content: 'What is 2+2?' }], thinking: { type: 'enabled', budget_tokens: 1024 } });
  assert.deepEqual(m.content.map((b) => b.type), ['thinking', 'text']);
  assert.equal(m.content[0]!.type === 'thinking' ? m.content[0]!.thinking : undefined, THOUGHT);
  await assert.rejects(
    client.messages.create({ model: DEEPSEEK.model, max_tokens: 4096, messages: [{ role: 'user', content: 'What is 2+2?' }], thinking: { type: 'disabled' } }),
    (err: unknown) => err instanceof Anthropic.BadRequestError && /deepseekv4_1_disable_thinking/.test(err.message),
  );
});

test('Messages: thinking enabled without a budget, or a budget under 1024, is a 400', async () => {
  anthropicRefusal(await call(DEEPSEEK, '/v1/messages', { ...ask, thinking: { type: 'enabled' } }), /thinking.budget_tokens: Field required/);
  anthropicRefusal(await call(DEEPSEEK, '/v1/messages', { ...ask, thinking: { type: 'enabled', budget_tokens: 10 } }), /budget_tokens must be at least 1024/);
});

test('Messages: on a renderer without reasoning, thinking disabled is served and thinking enabled refused', async () => {
  const plain = { ...ask, model: PLAIN.model };
  const ok = await call(PLAIN, '/v1/messages', { ...plain, thinking: { type: 'disabled' } });
  assert.equal(ok.status, 200, ok.text);
  anthropicRefusal(await call(PLAIN, '/v1/messages', { ...plain, thinking: { type: 'enabled', budget_tokens: 1024 } }), /role_colon renders no reasoning/);
});

// ---- Reasoning sent back ----

test('Responses: output items sent back as input (reasoning item included) render as the stored conversation does, the reasoning where gpt-oss keeps it', async () => {
  const first = await call(GPT_OSS, '/v1/responses', { input: 'What is 2+2?', reasoning: { effort: 'medium' } });
  assert.equal(first.status, 200, first.text);
  const next: Message[] = [...question, { role: 'assistant', content: [{ type: 'thinking', thinking: THOUGHT }, { type: 'text', text: '4' }] }, { role: 'user', content: 'And 3+3?' }];
  const resent = await call(GPT_OSS, '/v1/responses', { input: [{ role: 'user', content: 'What is 2+2?' }, ...first.json.output, { role: 'user', content: 'And 3+3?' }] }, next);
  assert.equal(resent.status, 200, resent.text);
  assert.ok(getTokenizer(GPT_OSS.model).decode(resent.json.prompt_token_ids).includes(`<|channel|>analysis<|message|>${THOUGHT}<|end|>`), 'gpt-oss keeps the analysis in history');
  const chained = await call(GPT_OSS, '/v1/responses', { previous_response_id: first.json.id, input: 'And 3+3?' }, next);
  assert.deepEqual(chained.json.prompt_token_ids, resent.json.prompt_token_ids, 'the same prompt as previous_response_id gives');
  openAiRefusal(await call(GPT_OSS, '/v1/responses', { input: [...first.json.output.slice(0, 1), { role: 'user', content: 'x' }] }), 'input[0]', /a reasoning item must be followed by the assistant message or function call/);
});

test('Messages: thinking blocks sent back in a tool loop are the turn\'s thinking, kept as deepseekv4_1 keeps it with tools declared', async () => {
  const ADD = { name: 'add', description: 'Add two numbers', input_schema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } } };
  const tools: ToolSpec[] = [{ type: 'function', function: { name: 'add', description: 'Add two numbers', parameters: ADD.input_schema } }];
  const body = {
    ...ask,
    tools: [ADD],
    thinking: { type: 'enabled', budget_tokens: 1024 },
    messages: [
      ...question,
      { role: 'assistant', content: [{ type: 'thinking', thinking: THOUGHT, signature: '' }, { type: 'tool_use', id: 'toolu_1', name: 'add', input: { a: 2, b: 2 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '4' }] },
    ],
  };
  const expected: Message[] = [
    ...question,
    { role: 'assistant', content: [{ type: 'thinking', thinking: THOUGHT }, { type: 'text', text: '' }], tool_calls: [{ type: 'function', id: 'toolu_1', function: { name: 'add', arguments: '{"a":2,"b":2}' } }] },
    { role: 'tool', tool_call_id: 'toolu_1', name: 'add', content: '4' },
  ];
  const res = await call(DEEPSEEK, '/v1/messages', body, expected, tools);
  assert.equal(res.status, 200, res.text);
  assert.ok(getTokenizer(DEEPSEEK.model).decode(res.json.prompt_token_ids).includes(`${THOUGHT}</think>`), 'the thinking is in the prompt');
  anthropicRefusal(await call(DEEPSEEK, '/v1/messages', { ...ask, messages: [...question, { role: 'assistant', content: [{ type: 'redacted_thinking', data: 'x' }, { type: 'text', text: '4' }] }, { role: 'user', content: 'ok' }] }), /redacted_thinking.*cannot be rendered/);
});
