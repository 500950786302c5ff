import { test } from 'node:test';
import assert from 'node:assert/strict';
import { filterAndUnflatten, unflattenAttributes } from '../../../spans/attributes';
import { literalEvalMaybe, parsePythonLiteral } from '../../../python/literal';
import { getRewardValue, isRewardSpan } from '../../../spans/rewards';
import { buildTraceTree, traverse } from '../../../rl/adapters/trace-tree';
import { tracerTraceToTriplet } from '../../../rl/adapters/tracer-trace-to-triplet';
import type { StoreSpan } from '../../../rl/adapters/types';

test('unflattenAttributes: lists only for exactly 0..n-1, later keys win', () => {
  assert.deepEqual(unflattenAttributes({ 'a.b': 1, 'a.c.0': 2, 'a.c.1': 3 }), { a: { b: 1, c: [2, 3] } });
  assert.deepEqual(unflattenAttributes({ 'x.0': 'a', 'x.2': 'c' }), { x: { '0': 'a', '2': 'c' } });
  assert.deepEqual(unflattenAttributes({ '1': 'b', '0': 'a' }), ['a', 'b']);
  assert.deepEqual(unflattenAttributes({ a: 1, 'a.b': 2 }), { a: { b: 2 } });
  assert.deepEqual(unflattenAttributes({ 'a.b': 2, a: 1 }), { a: 1 });
  const polluted = unflattenAttributes({ '__proto__.x': 1 }) as Record<string, unknown>;
  assert.deepEqual(Object.keys(polluted), ['__proto__']);
  assert.equal(({} as Record<string, unknown>).x, undefined);
});

test('filterAndUnflatten keeps only `prefix.` keys', () => {
  assert.deepEqual(
    filterAndUnflatten({ 'gen_ai.prompt.0.role': 'user', 'gen_ai.prompt.0.content': 'hi', 'gen_ai.prompts': 1, 'gen_ai.prompt': 'x' }, 'gen_ai.prompt'),
    [{ role: 'user', content: 'hi' }],
  );
});

test('parsePythonLiteral reads what LiteLLM writes with str()', () => {
  assert.deepEqual(parsePythonLiteral("[{'a': None, 'b': True, 'c': False, \"d\": 'it\\'s', 'e': (1, -2.5e3)}]"), [
    { a: null, b: true, c: false, d: "it's", e: [1, -2500] },
  ]);
  assert.deepEqual(parsePythonLiteral('[[1, 2,], [3]]'), [[1, 2], [3]]);
  assert.equal(parsePythonLiteral("'\\x41\\u00e9\\n'"), 'Aé\n');
  assert.throws(() => parsePythonLiteral('[1, 2'), SyntaxError);
  assert.throws(() => parsePythonLiteral('Choices(index=0)'), SyntaxError);
  assert.equal(literalEvalMaybe('not a literal'), 'not a literal');
  assert.deepEqual(literalEvalMaybe('[1]'), [1]);
  assert.deepEqual(literalEvalMaybe([1]), [1]);
});

test('getRewardValue: v0.3 list, AgentOps legacy, v0.2 annotation, and non-rewards', () => {
  const s = (name: string, attributes: Record<string, unknown>) => ({ name, attributes });
  assert.equal(getRewardValue(s('x', { 'agentlightning.reward.0.name': 'primary', 'agentlightning.reward.0.value': 0.75 })), 0.75);
  assert.equal(getRewardValue(s('x', { 'agentops.entity.output': '{"type": "reward", "value": 2}' })), 2);
  assert.equal(getRewardValue(s('x', { 'agentops.task.output': '{"type": "reward", "value": null}' })), null);
  assert.equal(getRewardValue(s('x', { 'agentops.task.output': 'not json' })), null);
  assert.equal(getRewardValue(s('agentlightning.annotation', { reward: -1 })), -1);
  assert.equal(getRewardValue(s('other', { reward: -1 })), null);
  assert.equal(isRewardSpan(s('agentlightning.operation', { 'agentlightning.operation.name': 'agentlightning.reward' })), true);
  assert.equal(isRewardSpan(s('agentlightning.operation', { 'agentlightning.operation.name': 'tool' })), false);
});

function span(id: string, parent: string | null, start: number, end: number): StoreSpan {
  return {
    rollout_id: 'r', attempt_id: 'a', sequence_id: 0, trace_id: 't', span_id: id, parent_id: parent, name: id,
    attributes: {}, start_time: start, end_time: end,
  };
}

test('buildTraceTree: several roots and a missing parent under one virtual root', () => {
  const tree = buildTraceTree([span('a', null, 0, 1), span('b', 'lost', 2, 3), span('c', 'lost', 4, 6), span('d', 'a', 0.5, 0.6)]);
  assert.equal(tree.id, 'virtual-root');
  assert.deepEqual(tree.children.map((c) => c.id), ['a', 'lost']);
  const lost = tree.children[1]!;
  assert.equal(lost.virtual, true);
  assert.deepEqual([lost.span.start_time, lost.span.end_time], [2, 6]);
  assert.deepEqual(traverse(tree).map((n) => n.id), ['virtual-root', 'a', 'd', 'lost', 'b', 'c']);
  assert.throws(() => buildTraceTree([]), /No spans/);
});

test('buildTraceTree: spans in a parent cycle are unreachable, not an endless recursion', () => {
  const tree = buildTraceTree([span('root', null, 0, 9), span('x', 'y', 1, 2), span('y', 'x', 1, 2)]);
  assert.equal(tree.id, 'root');
  assert.deepEqual(tree.children, []);
});

test('tracerTraceToTriplet of no spans, or of a trace without root, is no triplets', () => {
  assert.deepEqual(tracerTraceToTriplet([]), []);
  const cycle = [span('x', 'y', 1, 2), span('y', 'x', 1, 2)].map((s) => ({ ...s, name: 'openai.chat.completion' }));
  assert.throws(() => buildTraceTree(cycle), /No root/);
  assert.deepEqual(tracerTraceToTriplet(cycle), []);
});
