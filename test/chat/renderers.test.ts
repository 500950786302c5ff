// Exact token ids of representative conversations, pinned in fixtures/expected-ids.json (computed in Python
// by fixtures/make_expected.py with the HF `tokenizers` package, following the Dec-2025 cookbook). The renderers
// now follow tinker-cookbook 0.6.1 (checked against it by test/chat/parity.test.ts); the cases 0.6.1 renders
// differently are listed with why and with the edit that turns the Dec-2025 text into 0.6.1's, written here from
// the cookbook's rules rather than from our renderers. Those cases must render exactly the edited text, in the ids
// the tokenizer gives for it (the pinned cases show that tokenizing the whole text gives the renderers' ids).
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

/** Qwen3's 0.6.1 tool turns: calls write "arguments"; a result is a user turn wrapped in <tool_response>. */
const qwenToolTurns = (t: string): string =>
  t.replace(/"args": /g, '"arguments": ').replace(/<\|im_start\|>tool\n([\s\S]*?)<\|im_end\|>/g, '<|im_start|>user\n<tool_response>\n$1\n</tool_response><|im_end|>');
/** Qwen3 (thinking) 0.6.1: no "<think>\n" prefill after an assistant header, in history or at the end. */
const noThinkPrefill = (t: string): string => t.replace(/<\|im_start\|>assistant\n<think>\n(?!\n<\/think>)/g, '<|im_start|>assistant\n');
/** 0.6.1 keeps a string content's think block in history: the stripped "It is 4." turn gets its whole content back. */
const thinkKept = (t: string, c: Case): string => {
  const content = c.messages.find((m) => m.role === 'assistant')!.content as string;
  const stripped = content.split('</think>')[1].trimStart();
  return t.replace(`<|im_start|>assistant\n${stripped}<|im_end|>`, `<|im_start|>assistant\n${content}<|im_end|>`);
};
/** json.dumps with ensure_ascii: the one non-ASCII character in the tool declaration, escaped. */
const ensureAscii = (t: string): string => t.replace(/°/g, '\\u00b0');

const CHANGED_IN_0_6_1: Record<string, [why: string, edit: (decText: string, c: Case) => string]> = {
  'qwen3_instruct/tool_calls': ['tool results are user turns in <tool_response>; calls write "arguments", not "args"', qwenToolTurns],
  'qwen3/tool_calls': ['no <think> prefill in the headers; tool results in <tool_response>; calls write "arguments"', (t) => noThinkPrefill(qwenToolTurns(t))],
  'qwen3/system_user': ['the generation prompt ends at "<|im_start|>assistant\\n" (no "<think>\\n" prefill)', noThinkPrefill],
  'qwen3/multi_turn': ['no <think> prefill in headers', noThinkPrefill],
  'qwen3/thinking_history': ['string content keeps its think block in history (only thinking parts are stripped); no <think> prefill', (t, c) => thinkKept(noThinkPrefill(t), c)],
  'qwen3_disable_thinking/thinking_history': ['string content keeps its think block in history (only thinking parts are stripped)', thinkKept],
  'qwen3_instruct/system_user+tools': ['tool declarations are json.dumps with ensure_ascii (°C as \\u00b0C)', ensureAscii],
  'qwen3_instruct/user_only+tools': ['tool declarations are json.dumps with ensure_ascii', ensureAscii],
};

for (const c of cases) {
  const key = `${c.renderer}/${c.conversation}`;
  const changed = CHANGED_IN_0_6_1[key];
  test(`${c.renderer} on ${c.model}: ${c.conversation} ${changed ? 'differs from Dec-2025 as 0.6.1 says' : 'renders the pinned ids and decodes byte-exactly'}`, () => {
    const tok = getTokenizer(c.model);
    const renderer = getRenderer(c.renderer, tok);
    const ids = toInts(renderer.buildGenerationPrompt(c.tools ? withToolDeclarations(renderer, c.messages, c.tools) : c.messages));
    if (changed) {
      const [why, edit] = changed;
      const text = edit(c.text, c);
      assert.notEqual(text, c.text, `the edit for ${key} changes nothing`);
      assert.equal(tok.decode(ids), text, why);
      assert.deepEqual(ids, tok.encode(text), why);
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
