// Corner cases (lost parents, hierarchy repair, agent scopes, dedup, reward timing, legacy reward
// formats, first_sibling, Weave keys, proxy literals) against Agent-lightning 0.3.0's output on the
// same spans (fixtures/record_synthetic.py).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { llmProxyTraceToTriplet, tracerTraceToTriplet } from '../../../rl/adapters';
import type { StoreSpan, Triplet } from '../../../rl/adapters';

const fixture = JSON.parse(readFileSync(path.join(__dirname, 'fixtures', 'synthetic_cases.json'), 'utf8')) as {
  cases: { case: string; spans: StoreSpan[]; expected: Record<string, Triplet[]> }[];
};

const adapters: Record<string, (spans: StoreSpan[]) => Triplet[]> = {
  tracer_default: (s) => tracerTraceToTriplet(s),
  tracer_skip_empty: (s) => tracerTraceToTriplet(s, { skipEmptyTokenSpans: true }),
  tracer_agent_alpha: (s) => tracerTraceToTriplet(s, { agentMatch: 'alpha' }),
  tracer_agent_beta: (s) => tracerTraceToTriplet(s, { agentMatch: '^beta$' }),
  tracer_first_sibling: (s) => tracerTraceToTriplet(s, { rewardMatch: 'first_sibling' }),
  tracer_no_repair: (s) => tracerTraceToTriplet(s, { repairHierarchy: false }),
  tracer_no_repair_alpha: (s) => tracerTraceToTriplet(s, { repairHierarchy: false, agentMatch: 'alpha' }),
  tracer_weave_match: (s) => tracerTraceToTriplet(s, { llmCallMatch: 'openai\\.chat' }),
  tracer_keep_reward_calls: (s) => tracerTraceToTriplet(s, { excludeLlmCallInReward: false }),
  llm_proxy: (s) => llmProxyTraceToTriplet(s),
};

test('every recorded adapter variant is exercised', () => {
  for (const c of fixture.cases) assert.deepEqual(Object.keys(c.expected).sort(), Object.keys(adapters).sort());
});

for (const c of fixture.cases) {
  for (const [name, adapt] of Object.entries(adapters)) {
    test(`${c.case}: ${name} matches Python`, () => {
      // Fresh copies: repairHierarchy mutates the tree, never the input spans, but be sure.
      const spans = JSON.parse(JSON.stringify(c.spans)) as StoreSpan[];
      assert.deepEqual(adapt(spans), c.expected[name]);
      assert.deepEqual(spans, c.spans);
    });
  }
}

const spansOf = (name: string) => fixture.cases.find((c) => c.case === name)!.spans;

// A few of the recorded answers spelled out, so a reader sees what the cases pin down.
test('repair moves flat calls under the agent spans that contain them in time', () => {
  const spans = spansOf('repair_moves_calls_under_agents');
  assert.deepEqual(tracerTraceToTriplet(spans, { agentMatch: 'alpha' }).map((t) => t.metadata.response_id), ['a1']);
  assert.deepEqual(tracerTraceToTriplet(spans, { agentMatch: 'alpha', repairHierarchy: false }), []);
});

test('rewards: none for a running call, at most one per call, legacy and multi-dimensional formats', () => {
  assert.deepEqual(tracerTraceToTriplet(spansOf('reward_timing_and_legacy_formats')).map((t) => t.reward), [0.9, 0.7, 2]);
});

test('proxy adapter: duplicate request ids once, rewards by sequence id', () => {
  const triplets = llmProxyTraceToTriplet(spansOf('proxy_literals_and_sequence'));
  assert.deepEqual(
    triplets.map((t) => [t.prompt.token_ids, t.response.token_ids, t.reward]),
    [
      [[1, 2, 3], [4, 5], 0.25],
      [[1, 2, 3, 4, 5, 6], [7], 0.5],
      [[8], [9, 10], 1],
    ],
  );
});
