// makeTripletAdapter, the adapter a run uses: Python's answers on Python traces, and triplets with
// logprobs from the spans our proxy writes for TypeScript agents (no client-side LLM spans there).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_LLM_CALL_MATCH, makeTripletAdapter, tracerTraceToTriplet } from '../../../rl/adapters';
import type { StoreSpan, Triplet } from '../../../rl/adapters';
import { reconstructTransitions } from '../../../rl/transitions';

const recorded = JSON.parse(readFileSync(path.join(__dirname, 'fixtures', 'agl030_rollouts.json'), 'utf8')) as {
  rollouts: { task: { kind: string }; spans: StoreSpan[]; expected: Record<string, Triplet[]> }[];
};

test('on Python traces (LiteLLM proxy spans included) the widened call match changes nothing', () => {
  for (const r of recorded.rollouts) {
    assert.deepEqual(makeTripletAdapter({ adapterFromLlmProxy: false })(r.spans), r.expected.tracer_skip_empty, r.task.kind);
    assert.deepEqual(tracerTraceToTriplet(r.spans, { llmCallMatch: DEFAULT_LLM_CALL_MATCH }), r.expected.tracer_default, r.task.kind);
  }
});

let seq = 0;
/** A span shaped as proxy/span.ts writes them: a root `litellm_request` with token ids and logprobs. */
function proxySpan(id: string, start: number, end: number, prompt: number[], response: number[], logprobs: number[]): StoreSpan {
  seq += 1;
  return {
    rollout_id: 'ro', attempt_id: 'at', sequence_id: seq, trace_id: id.padStart(32, '0'), span_id: id.padStart(16, '0'),
    parent_id: null, name: 'litellm_request', start_time: start, end_time: end,
    attributes: {
      'gen_ai.request.model': 'policy',
      'gen_ai.prompt.0.role': 'user',
      'gen_ai.prompt.0.content': 'q',
      'gen_ai.response.id': `chatcmpl-${id}`,
      'gen_ai.completion.0.role': 'assistant',
      'gen_ai.completion.0.content': 'a',
      prompt_token_ids: prompt,
      response_token_ids: response,
      'logprobs.content': JSON.stringify(logprobs.map((logprob, i) => ({ token: `t${i}`, bytes: null, logprob, top_logprobs: [] }))),
    },
  };
}

function rewardSpan(id: string, at: number, value: number): StoreSpan {
  seq += 1;
  return {
    rollout_id: 'ro', attempt_id: 'at', sequence_id: seq, trace_id: id.padStart(32, '0'), span_id: id.padStart(16, '0'),
    parent_id: null, name: 'agentlightning.annotation', start_time: at, end_time: at,
    attributes: { 'agentlightning.reward.0.name': 'primary', 'agentlightning.reward.0.value': value },
  };
}

test('a TypeScript agent through our proxy: two turns and a reward become a trainable trajectory', () => {
  const spans = [
    proxySpan('a1', 1, 2, [1, 2], [3, 4], [-0.5, -0.25]),
    proxySpan('a2', 3, 4, [1, 2, 3, 4, 5], [6], [-1]),
    rewardSpan('r1', 5, 1),
  ];
  const triplets = makeTripletAdapter({ adapterFromLlmProxy: false })(spans);
  assert.deepEqual(triplets.map((t) => [t.prompt.token_ids, t.response.token_ids, t.reward]), [
    [[1, 2], [3, 4], null],
    [[1, 2, 3, 4, 5], [6], 1],
  ]);
  const { trajectory } = reconstructTransitions(triplets);
  assert.deepEqual(trajectory.transitions.map((t) => t.acLogprobs), [[-0.5, -0.25], [-1]]);
  // The seed's default call match alone would see nothing here.
  assert.deepEqual(tracerTraceToTriplet(spans, { skipEmptyTokenSpans: true, llmCallMatch: 'openai\\.chat\\.completion' }), []);
  // The proxy adapter reads the same spans, and (unlike Python's) their logprobs, so it can train too.
  const viaProxy = makeTripletAdapter({ adapterFromLlmProxy: true })(spans);
  assert.deepEqual(viaProxy.map((t) => [t.response.token_ids, t.reward]), [
    [[3, 4], null],
    [[6], 1],
  ]);
  assert.deepEqual(reconstructTransitions(viaProxy).trajectory, trajectory);
});

test('adapterLlmCallMatch overrides the call match', () => {
  const spans = [proxySpan('b1', 1, 2, [1], [2], [-1]), rewardSpan('r2', 3, 0.5)];
  assert.deepEqual(makeTripletAdapter({ adapterFromLlmProxy: false, adapterLlmCallMatch: 'openai\\.chat\\.completion' })(spans), []);
  assert.equal(makeTripletAdapter({ adapterFromLlmProxy: false })(spans)[0]!.reward, 0.5);
});
