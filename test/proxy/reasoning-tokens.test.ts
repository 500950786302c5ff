// The reasoning token count (proxy/reasoning-tokens.ts) on gpt-oss samples parsed by the real renderer: it is the
// length of the sample up to the reasoning's end, also when the reasoning's last words come again in the answer or
// earlier in the reasoning, and when the reasoning is two analysis messages joined.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getRenderer, getTokenizer } from '../../chat';
import { reasoningTokenCount } from '../../proxy/reasoning-tokens';

const tok = getTokenizer('openai/gpt-oss-20b');
const renderer = getRenderer('gpt_oss_medium_reasoning', tok);

function count(reasoningPart: string, rest: string): { got: number; want: number } {
  const tokens = [...tok.encode(reasoningPart + rest), tok.encode('<|return|>')[0]!];
  const content = renderer.parseResponse(tokens).message.content;
  const thinking = Array.isArray(content) ? content.flatMap((p) => (p.type === 'thinking' ? [p.thinking] : [])) : [];
  assert.ok(thinking.length, 'the sample has reasoning');
  return { got: reasoningTokenCount(tok, tokens, thinking), want: tok.encode(reasoningPart).length };
}

test('the count ends where the reasoning ends, though its last words come again in the answer', () => {
  const said = 'the answer is yes, the answer is yes.';
  const { got, want } = count(`<|channel|>analysis<|message|>${said} ${said} ${said}`, `<|end|><|start|>assistant<|channel|>final<|message|>${said}`);
  assert.equal(got, want);
});

test('two analysis messages joined: the count covers both', () => {
  const { got, want } = count(
    '<|channel|>analysis<|message|>First thought.<|end|><|start|>assistant<|channel|>analysis<|message|>Second thought.',
    '<|end|><|start|>assistant<|channel|>final<|message|>Done.',
  );
  assert.equal(got, want);
});

test('no reasoning, no count', () => {
  assert.equal(reasoningTokenCount(tok, tok.encode('<|channel|>final<|message|>Hi'), []), 0);
  assert.equal(reasoningTokenCount(tok, tok.encode('<|channel|>final<|message|>Hi'), ['', ' ']), 0);
});
