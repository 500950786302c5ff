// `client render` prints the cookbook's tokens: the same file rendered by tinker-cookbook 0.6.1 (the parity venv)
// gives the same generation prompt, and the same tokens and weights for a supervised example; --text pieces decode
// back to the tokens; a model without a tokenizer at hand is one line naming the setting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { findTokenizerFiles } from '../../chat/tokenizer-files';
import { cookbookVenv } from '../helpers/cookbook-venv';
import { assertOneLine, client } from '../helpers/commands';

const run = promisify(execFile);
const scratch = mkdtempSync(path.join(process.env.AGL_TEST_SCRATCH ?? os.tmpdir(), 'agl-render-'));

const FILE = {
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Weather in Zürich?' },
    { role: 'assistant', content: '', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Zürich", "days": 2.0}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: '21 °C' },
    { role: 'assistant', content: [{ type: 'text', text: 'It is 21 °C.' }], reasoning_content: 'Report the tool result.' },
  ],
  tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather (°C)', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
};

// The cookbook side: OpenAI messages to cookbook messages as render does (reasoning_content → a thinking part).
const PY = `
import json, sys
from transformers import PreTrainedTokenizerFast
from tinker_cookbook import renderers as R
from tinker_cookbook.renderers.base import ToolCall, TrainOnWhat
spec, body, renderer_name = json.loads(sys.argv[1]), json.load(open(sys.argv[2])), sys.argv[3]
tok = PreTrainedTokenizerFast(tokenizer_file=spec["file"], eos_token=spec["eos"])
r = R.get_renderer(renderer_name, tok)
msgs = []
for m in body["messages"]:
    m = dict(m)
    if "tool_calls" in m:
        m["tool_calls"] = [ToolCall(id=c["id"], function=ToolCall.FunctionBody(**c["function"])) for c in m["tool_calls"]]
    if "reasoning_content" in m:
        text = m.pop("reasoning_content")
        m["content"] = [{"type": "thinking", "thinking": text}] + (m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}])
    msgs.append(m)
system = msgs[0]["content"]
msgs = r.create_conversation_prefix_with_tools([t["function"] for t in body["tools"]], system) + msgs[1:]
prompt = r.build_generation_prompt(msgs).to_ints()
mi, w = r.build_supervised_example(msgs, train_on_what=TrainOnWhat.LAST_ASSISTANT_TURN)
print(json.dumps({"prompt": prompt, "tokens": mi.to_ints(), "weights": [float(x) for x in w]}))
`;

test('render prints the cookbook tokens (prompt) and tokens + weights (--supervised) for qwen3 with tools and thinking', { timeout: 15 * 60_000 }, async () => {
  const file = path.join(scratch, 'chat.json');
  writeFileSync(file, JSON.stringify(FILE));
  const files = findTokenizerFiles('Qwen/Qwen3-8B')!;
  const venv = await cookbookVenv();
  const spec = { file: path.join(files.dir, 'tokenizer.json'), eos: files.config.eos_token };
  const { stdout } = await run(venv.python, ['-c', PY, JSON.stringify(spec), file, 'qwen3'], { maxBuffer: 16 << 20 });
  const want = JSON.parse(stdout.trim().split('\n').at(-1)!) as { prompt: number[]; tokens: number[]; weights: number[] };

  const prompt = await client(['render', '--model', 'Qwen/Qwen3-8B', file]);
  assert.equal(prompt.code, 0, prompt.stderr);
  assert.deepEqual(JSON.parse(prompt.stdout), { tokens: want.prompt });

  const sup = await client(['render', '--model', 'Qwen/Qwen3-8B', '--supervised', '--train-on', 'last_assistant_turn', '--text', file]);
  assert.equal(sup.code, 0, sup.stderr);
  const line = JSON.parse(sup.stdout) as { tokens: number[]; weights: number[]; text: { text: string; weight: number }[] };
  assert.deepEqual([line.tokens, line.weights], [want.tokens, want.weights]);
  assert.ok(want.weights.some((w) => w > 0) && want.weights.some((w) => w === 0), 'the example has trained and untrained tokens');
  assert.ok(line.text.some((p) => p.weight === 1 && p.text.includes('It is 21 °C.')), 'the trained piece is the last turn');
  assert.ok(line.text.some((p) => p.weight === 0 && p.text.includes('<tool_response>\n21 °C\n</tool_response>')), 'the tool result is not trained');
});

test('render: a renderer not recommended warns as the cookbook does; no tokenizer offline is one line naming the setting', async () => {
  const file = path.join(scratch, 'plain.json');
  writeFileSync(file, JSON.stringify({ messages: [{ role: 'user', content: 'Hi' }] }));
  const r = await client(['render', '--model', 'Qwen/Qwen3-8B', '--renderer', 'qwen3_instruct', file]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /^warning: Renderer 'qwen3_instruct' is not recommended for model 'Qwen\/Qwen3-8B'/);
  const env = { ...process.env, HF_HOME: path.join(scratch, 'empty-hf'), AGL_TOKENIZER_DIR: '' };
  assertOneLine(await client(['render', '--model', 'zai-org/GLM-5.3', '--renderer', 'role_colon', file], env), /no tokenizer for model "zai-org\/GLM-5\.3" on this machine: put its tokenizer\.json .* \$AGL_TOKENIZER_DIR\/zai-org\/GLM-5\.3\//);
});
