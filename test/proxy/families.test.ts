// gpt-oss, DeepSeek V3.1 and DeepSeek V4.1 through the proxy's three front doors: the prompt is exactly the
// renderer's (tools declared in the family's own format, tool results rendered back under the called function's
// name), the family's tool-call syntax comes back as OpenAI tool_calls, Responses function_call items and
// Anthropic tool_use blocks, and its reasoning as reasoning_content, a reasoning item and a thinking block.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { getRenderer, getTokenizer, toInts } from '../../chat';
import { withToolDeclarations } from '../../chat/tools';
import type { Message } from '../../chat';
import { ScriptedSamplerFactory, type Script } from '../../proxy/fake-sampler';
import { namedEvents, policy, post, startHarness, type Harness } from './helpers';

const WEATHER = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
const ANTHROPIC_WEATHER = { name: 'get_weather', description: 'Weather of a city', input_schema: WEATHER.function.parameters };

interface Family {
  model: string;
  renderer: string;
  /** What the model writes: a call of get_weather for Paris with reasoning, or (after a result) an answer. */
  call: string;
  answer: string;
  /** Text that shows the tool result was rendered back in the family's format. */
  resultMarker: string;
}

const FAMILIES: Family[] = [
  {
    model: 'openai/gpt-oss-20b',
    renderer: 'gpt_oss_medium_reasoning',
    call: '<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{"city": "Paris"}<|call|>',
    answer: '<|channel|>analysis<|message|>18 is mild.<|end|><|start|>assistant<|channel|>final<|message|>Mild, 18 degrees.',
    resultMarker: '<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>18C<|end|>',
  },
  {
    model: 'deepseek-ai/DeepSeek-V3.1',
    renderer: 'deepseekv3_thinking',
    call: 'Need the weather.</think><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    answer: '18 is mild.</think>Mild, 18 degrees.',
    resultMarker: '<｜tool▁output▁begin｜>18C<｜tool▁output▁end｜>',
  },
  {
    model: 'deepseek-ai/DeepSeek-V4.1-Flash',
    renderer: 'deepseekv4_1',
    call: 'Need the weather.</think>\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name="get_weather">\n<｜DSML｜ parameter name="city" string="true">Paris</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n</｜DSML｜ calls>',
    answer: '18 is mild.</think>Mild, 18 degrees.',
    resultMarker: '<tool_result>18C</tool_result>',
  },
];

const harnesses = new Map<string, Harness>();
before(async () => {
  for (const f of FAMILIES) {
    const tok = getTokenizer(f.model);
    const script: Script = (prompt) => (tok.decode(prompt).includes('18C') ? f.answer : f.call);
    const factory = new ScriptedSamplerFactory(() => f.renderer, script);
    harnesses.set(f.model, await startHarness({ factory, initial: policy({ switchId: f.renderer, modelName: f.model, baseModel: f.model, renderer: f.renderer }) }));
  }
});
after(async () => {
  for (const h of harnesses.values()) await h.close();
});

for (const f of FAMILIES) {
  const tok = getTokenizer(f.model);
  const renderer = getRenderer(f.renderer, tok);

  test(`${f.renderer}: chat completions with tools render as the renderer does and parse the family's calls and reasoning`, async () => {
    const url = `${harnesses.get(f.model)!.proxy.url}/v1/chat/completions`;
    const question: Message[] = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Weather in Paris?' }];
    const first = await post(url, { messages: question, tools: [WEATHER] });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.json.prompt_token_ids, toInts(renderer.buildGenerationPrompt(withToolDeclarations(renderer, question, [WEATHER]))));
    const choice = first.json.choices[0];
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.tool_calls.length, 1);
    assert.equal(choice.message.tool_calls[0].function.name, 'get_weather');
    assert.deepEqual(JSON.parse(choice.message.tool_calls[0].function.arguments), { city: 'Paris' });
    assert.equal(choice.message.reasoning_content, 'Need the weather.');

    // The result goes back with only its call id; the proxy names it after the call, as the cookbook's proxy does.
    const call = choice.message.tool_calls[0];
    const second = await post(url, {
      messages: [...question, { role: 'assistant', content: choice.message.content, reasoning_content: choice.message.reasoning_content, tool_calls: [call] }, { role: 'tool', tool_call_id: call.id, content: '18C' }],
      tools: [WEATHER],
    });
    assert.equal(second.status, 200, second.text);
    const expected: Message[] = [
      ...question,
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'Need the weather.' }, { type: 'text', text: choice.message.content }], tool_calls: [call] },
      { role: 'tool', tool_call_id: call.id, name: 'get_weather', content: '18C' },
    ];
    assert.deepEqual(second.json.prompt_token_ids, toInts(renderer.buildGenerationPrompt(withToolDeclarations(renderer, expected, [WEATHER]))));
    assert.ok(tok.decode(second.json.prompt_token_ids).includes(f.resultMarker), 'the result is rendered in the family format');
    assert.equal(second.json.choices[0].message.content, 'Mild, 18 degrees.');
    assert.equal(second.json.choices[0].message.reasoning_content, '18 is mild.');
  });

  test(`${f.renderer}: Responses gives a reasoning item and a function_call item, then answers after function_call_output`, async () => {
    const url = `${harnesses.get(f.model)!.proxy.url}/v1/responses`;
    const tools = [{ type: 'function', ...WEATHER.function }];
    const r = await post(url, { input: 'Weather in Paris?', tools });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.output.map((i: any) => i.type), ['reasoning', 'function_call']);
    assert.equal(r.json.output[0].content[0].text, 'Need the weather.');
    assert.equal(r.json.output[1].name, 'get_weather');
    assert.deepEqual(JSON.parse(r.json.output[1].arguments), { city: 'Paris' });
    const next = await post(url, { previous_response_id: r.json.id, input: [{ type: 'function_call_output', call_id: r.json.output[1].call_id, output: '18C' }], tools });
    assert.equal(next.status, 200, next.text);
    assert.ok(tok.decode(next.json.prompt_token_ids).includes(f.resultMarker));
    assert.deepEqual(next.json.output.map((i: any) => i.type), ['reasoning', 'message']);
    assert.equal(next.json.output[1].content[0].text, 'Mild, 18 degrees.');
    const stream = await post(url, { input: 'Weather in Paris?', tools, stream: true });
    const deltas = namedEvents(stream.text).filter((e) => e.type === 'response.reasoning_text.delta').map((e) => e.delta);
    assert.equal(deltas.join(''), 'Need the weather.', 'the reasoning streams as reasoning_text deltas');
  });

  test(`${f.renderer}: Anthropic Messages gives thinking and tool_use blocks and renders the tool_result back`, async () => {
    const url = `${harnesses.get(f.model)!.proxy.url}/v1/messages`;
    const m = await post(url, { model: f.model, max_tokens: 200, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [ANTHROPIC_WEATHER] });
    assert.equal(m.status, 200, m.text);
    assert.deepEqual(m.json.content.map((b: any) => b.type), ['thinking', 'tool_use']);
    assert.equal(m.json.content[0].thinking, 'Need the weather.');
    assert.deepEqual(m.json.content[1].input, { city: 'Paris' });
    assert.equal(m.json.stop_reason, 'tool_use');
    const use = m.json.content[1];
    const next = await post(url, {
      model: f.model,
      max_tokens: 200,
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: use.id, name: use.name, input: use.input }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '18C' }] },
      ],
      tools: [ANTHROPIC_WEATHER],
    });
    assert.equal(next.status, 200, next.text);
    assert.ok(tok.decode(next.json.prompt_token_ids).includes(f.resultMarker));
    assert.deepEqual(next.json.content.map((b: any) => b.type), ['thinking', 'text']);
    assert.equal(next.json.content[1].text, 'Mild, 18 degrees.');
  });
}
