// Kimi K2.5, GLM-5.3 and Nemotron 3 through the proxy's three front doors: tools declared in each family's own
// format in the prompt, the call the model writes in that format parsed into OpenAI tool_calls, Responses
// function_call items and Anthropic tool_use blocks, reasoning kept apart (chat reasoning_content), and a tool
// result rendered back the family's way. Tokenizers: the test tokenizers (test/helpers/test-tokenizers.ts),
// found by model name through AGL_TOKENIZER_DIR as a user's files would be.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { getTokenizer } from '../../chat';
import { ScriptedSamplerFactory } from '../../proxy/fake-sampler';
import { buildTestTokenizers } from '../helpers/test-tokenizers';
import { TEST_TOKENIZER_DIR } from '../chat/families2/tokenizers';
import { policy, post, startHarness, type Harness } from './helpers';

interface Family {
  model: string;
  renderer: string;
  files: 'kimi' | 'glm5' | 'nemotron3';
  /** What the model writes after the prompt (which ends in an open think block) when it calls the tool. */
  call: string;
  /** The text the cookbook's parse leaves around the call (Nemotron keeps the newlines around its XML block). */
  content: string;
  /** Marks of this family's tool declaration and of a tool result in the prompt. */
  declared: RegExp;
  result: RegExp;
}

const FAMILIES: Family[] = [
  {
    model: 'moonshotai/Kimi-K2.5',
    renderer: 'kimi_k25',
    files: 'kimi',
    call: 'I need the weather.</think>Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris", "days": 2.0}<|tool_call_end|><|tool_calls_section_end|>',
    content: 'Checking.',
    declared: /<\|im_system\|>tool_declare<\|im_middle\|># Tools\n\n## functions\nnamespace functions \{\n\/\/ Weather for a city\.\ntype get_weather = \(_: \{\n  city: string,\n  days\?: number\n\}\) => any;/,
    result: /<\|im_system\|>get_weather<\|im_middle\|>## Return of c1\n21 C<\|im_end\|>/,
  },
  {
    model: 'zai-org/GLM-5.3',
    renderer: 'glm5_3_max_reasoning',
    files: 'glm5',
    call: 'I need the weather.</think>Checking.<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>days</arg_key><arg_value>2.0</arg_value></tool_call>',
    content: 'Checking.',
    declared: /<\|system\|>\n# Tools\n[\s\S]*<tools>\n\{"name": "get_weather", "description": "Weather for a city\.", "parameters": /,
    result: /<\|observation\|><tool_response>21 C<\/tool_response><\|assistant\|><think>$/,
  },
  {
    model: 'nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16',
    renderer: 'nemotron3',
    files: 'nemotron3',
    call: 'I need the weather.\n</think>\nChecking.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n2.0\n</parameter>\n</function>\n</tool_call>\n',
    content: 'Checking.\n\n',
    declared: /<tools>\n<function>\n<name>get_weather<\/name>\n<description>Weather for a city\.<\/description>\n<parameters>\n<parameter>\n<name>city<\/name>\n<type>string<\/type>/,
    result: /<\|im_start\|>user\n<tool_response>\n21 C\n<\/tool_response>\n<\|im_end\|>\n<\|im_start\|>assistant\n<think>\n$/,
  },
];

const TOOL = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather for a city.', parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city'] } },
};

const harnesses = new Map<string, Harness>();

before(async () => {
  const dirs = buildTestTokenizers(TEST_TOKENIZER_DIR);
  const root = mkdtempSync(path.join(tmpdir(), 'families2-tok-'));
  for (const f of FAMILIES) {
    mkdirSync(path.join(root, f.model), { recursive: true });
    cpSync(dirs[f.files], path.join(root, f.model), { recursive: true });
  }
  process.env.AGL_TOKENIZER_DIR = root;
  for (const f of FAMILIES) {
    const tok = getTokenizer(f.model);
    // The model calls the tool until it sees the tool's result, then answers.
    const script = (prompt: number[]) => (tok.decode(prompt).includes('21 C') ? 'Got it.</think>It is 21 C in Paris.' : f.call);
    const factory = new ScriptedSamplerFactory(() => f.renderer, script);
    harnesses.set(f.model, await startHarness({ factory, initial: policy({ switchId: f.renderer, modelName: f.model, baseModel: f.model, renderer: f.renderer }) }));
  }
});
after(async () => {
  for (const h of harnesses.values()) await h.close();
});

for (const f of FAMILIES) {
  test(`${f.renderer}: chat completions with tools — declared the family's way, the call parsed into tool_calls, reasoning apart, the result rendered back`, async () => {
    const h = harnesses.get(f.model)!;
    const tok = getTokenizer(f.model);
    const c = await post(`${h.proxy.url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [TOOL] });
    assert.equal(c.status, 200, JSON.stringify(c.json));
    assert.match(tok.decode(c.json.prompt_token_ids), f.declared);
    const choice = c.json.choices[0];
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, f.content);
    assert.equal(choice.message.reasoning_content, 'I need the weather.');
    assert.equal(choice.message.tool_calls.length, 1);
    const call = choice.message.tool_calls[0];
    assert.equal(call.function.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.function.arguments), { city: 'Paris', days: 2 });
    assert.match(call.function.arguments, /2\.0/, 'the float stays a float, as Python writes it');
    if (f.files === 'kimi') assert.equal(call.id, 'functions.get_weather:0', 'Kimi names its calls');

    const back = await post(`${h.proxy.url}/v1/chat/completions`, {
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }] },
        { role: 'tool', tool_call_id: 'c1', name: 'get_weather', content: '21 C' },
      ],
      tools: [TOOL],
    });
    assert.equal(back.status, 200, JSON.stringify(back.json));
    assert.match(tok.decode(back.json.prompt_token_ids), f.result);
    assert.equal(back.json.choices[0].message.content, 'It is 21 C in Paris.');
    assert.equal(back.json.choices[0].finish_reason, 'stop');
  });

  test(`${f.renderer}: Responses function_call items and Anthropic tool_use blocks from the same call`, async () => {
    const h = harnesses.get(f.model)!;
    const r = await post(`${h.proxy.url}/v1/responses`, { input: 'Weather in Paris?', tools: [{ type: 'function', name: 'get_weather', parameters: TOOL.function.parameters }] });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const calls = r.json.output.filter((o: { type: string }) => o.type === 'function_call');
    assert.equal(calls.length, 1);
    assert.equal(calls[0].name, 'get_weather');
    assert.deepEqual(JSON.parse(calls[0].arguments), { city: 'Paris', days: 2 });
    const m = await post(`${h.proxy.url}/v1/messages`, {
      model: f.model,
      max_tokens: 200,
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [{ name: 'get_weather', description: 'Weather for a city.', input_schema: TOOL.function.parameters }],
    });
    assert.equal(m.status, 200, JSON.stringify(m.json));
    assert.equal(m.json.stop_reason, 'tool_use');
    const use = m.json.content.find((b: { type: string }) => b.type === 'tool_use');
    assert.deepEqual([use.name, use.input], ['get_weather', { city: 'Paris', days: 2 }]);
  });
}
