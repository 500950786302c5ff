// Exact token ids of representative conversations, pinned in fixtures/expected-ids.json (computed in Python
// by fixtures/make_expected.py with the HF `tokenizers` package and checked against the models' chat templates).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { getRenderer, getTokenizer } from '../../chat';
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

for (const c of cases) {
  test(`${c.renderer} on ${c.model}: ${c.conversation} renders the pinned ids and decodes byte-exactly`, () => {
    const tok = getTokenizer(c.model);
    const renderer = getRenderer(c.renderer, tok);
    const ids = renderer.buildGenerationPrompt(c.tools ? withToolDeclarations(c.messages, c.tools) : c.messages);
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
  assert.deepEqual(getRenderer('qwen3_instruct', q).stopSequences(), [151645]);
  assert.deepEqual(getRenderer('llama3', l).stopSequences(), [128009]);
  assert.deepEqual(getRenderer('role_colon', l).stopSequences(), ['\n\nUser:']);
});

test('unknown renderer and unknown model are clear errors', () => {
  assert.throws(() => getRenderer('chatml', getTokenizer('local/x')), /unknown renderer "chatml"/);
  assert.throws(() => getTokenizer('gpt-4o'), /no tokenizer for model "gpt-4o"/);
  assert.throws(() => getRenderer('qwen3', getTokenizer('local/x')), /needs <\|im_end\|>/);
});
