// Exact token ids of representative conversations, pinned in fixtures/expected-ids.json (computed in Python
// by fixtures/make_expected.py with the HF `tokenizers` package, following the Dec-2025 cookbook). The renderers
// now follow tinker-cookbook 0.6.1 (checked against it by test/chat/parity.test.ts); the cases 0.6.1 renders
// differently are listed with why, and must differ from the Dec-2025 ids.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { getRenderer, getTokenizer, toInts } from '../../chat';
import type { Message } from '../../chat';
import { withToolDeclarations } from '../../chat/tools';

interface Case {
  renderer: string;
  model: string;
  conversation: string;
  messages: Message[];
  tools?: Record<string, unknown>[];
  text: string;
  ids: number[];
}

const cases = JSON.parse(readFileSync(path.join(__dirname, 'fixtures', 'expected-ids.json'), 'utf8')) as Case[];

const CHANGED_IN_0_6_1: Record<string, string> = {
  'qwen3_instruct/tool_calls': 'tool results are user turns in <tool_response>; calls write "arguments", not "args"',
  'qwen3/tool_calls': 'no <think> prefill in the header; the produced turn gets the empty think frame; tool results in <tool_response>',
  'qwen3/system_user': 'the generation prompt ends at "<|im_start|>assistant\\n" (no "<think>\\n" prefill)',
  'qwen3/multi_turn': 'no <think> prefill in headers',
  'qwen3/thinking_history': 'string content keeps its think block in history (only thinking parts are stripped)',
  'qwen3_disable_thinking/thinking_history': 'string content keeps its think block in history (only thinking parts are stripped)',
  'qwen3_instruct/system_user+tools': 'tool declarations are json.dumps with ensure_ascii (°C as \\u00b0C)',
  'qwen3_instruct/user_only+tools': 'tool declarations are json.dumps with ensure_ascii',
};

for (const c of cases) {
  const key = `${c.renderer}/${c.conversation}`;
  const changed = CHANGED_IN_0_6_1[key];
  test(`${c.renderer} on ${c.model}: ${c.conversation} ${changed ? 'differs from Dec-2025 as 0.6.1 says' : 'renders the pinned ids and decodes byte-exactly'}`, () => {
    const tok = getTokenizer(c.model);
    const renderer = getRenderer(c.renderer, tok);
    const ids = toInts(renderer.buildGenerationPrompt(c.tools ? withToolDeclarations(renderer, c.messages, c.tools) : c.messages));
    if (changed) {
      assert.notDeepEqual(ids, c.ids, changed);
      return;
    }
    assert.deepEqual(ids, c.ids);
    assert.equal(tok.decode(ids), c.text);
  });
}

test('the expected ids cover system, multi-turn and tool-call conversations for every renderer', () => {
  const seen = new Set(cases.map((c) => `${c.renderer}/${c.conversation}`));
  for (const r of ['role_colon', 'llama3', 'qwen3_instruct', 'qwen3']) {
    assert.ok(seen.has(`${r}/system_user`), r);
    assert.ok(seen.has(`${r}/multi_turn`), r);
  }
  assert.ok(seen.has('qwen3_instruct/tool_calls'));
  assert.ok(seen.has('qwen3/tool_calls'));
  assert.ok(seen.has('qwen3_instruct/system_user+tools'));
});

test('well-known special ids', () => {
  const q = getTokenizer('Qwen/Qwen3-4B-Instruct-2507');
  assert.deepEqual(q.encode('<|endoftext|><|im_start|><|im_end|>'), [151643, 151644, 151645]);
  const l = getTokenizer('meta-llama/Llama-3.1-8B-Instruct');
  assert.deepEqual(l.encode('<|begin_of_text|><|end_of_text|><|start_header_id|><|end_header_id|><|eot_id|>'), [128000, 128001, 128006, 128007, 128009]);
  assert.deepEqual(getRenderer('qwen3_instruct', q).getStopSequences(), [151645]);
  assert.deepEqual(getRenderer('llama3', l).getStopSequences(), [128009]);
  assert.deepEqual(getRenderer('role_colon', l).getStopSequences(), ['\n\nUser:']);
});

test('unknown renderer and unknown model are clear errors', () => {
  assert.throws(() => getRenderer('chatml', getTokenizer('local/x')), /unknown renderer "chatml"/);
  assert.throws(() => getTokenizer('gpt-4o'), /no tokenizer for model "gpt-4o"/);
  assert.throws(() => getRenderer('qwen3', getTokenizer('local/x')), /needs <\|im_end\|>/);
});
