// Our adapters against Agent-lightning 0.3.0's on spans recorded from a real Python runner
// (AgentOps tracer + LiteLLM proxy + LitAgentRunner; see fixtures/record_fixtures.py).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { llmProxyTraceToTriplet, makeTripletAdapter, tracerTraceToTriplet } from '../../../rl/adapters';
import type { StoreSpan, Triplet } from '../../../rl/adapters';
import { reconstructTransitions } from '../../../rl/transitions';
import { trajectoryToData } from '../../../rl/datums';

interface Recorded {
  task: { kind: string };
  status: string;
  spans: StoreSpan[];
  expected: Record<string, Triplet[]>;
}

const fixture = JSON.parse(readFileSync(path.join(__dirname, 'fixtures', 'agl030_rollouts.json'), 'utf8')) as {
  rollouts: Recorded[];
};

const adapters: Record<string, (spans: StoreSpan[]) => Triplet[]> = {
  tracer_default: (s) => tracerTraceToTriplet(s),
  tracer_skip_empty: (s) => tracerTraceToTriplet(s, { skipEmptyTokenSpans: true }),
  tracer_agent_player: (s) => tracerTraceToTriplet(s, { agentMatch: 'player' }),
  llm_proxy: (s) => llmProxyTraceToTriplet(s),
};

test('the fixture covers every scenario', () => {
  assert.deepEqual(
    fixture.rollouts.map((r) => r.task.kind),
    ['single', 'multi', 'no_reward', 'return_reward', 'untokenised', 'agents', 'error'],
  );
});

for (const rollout of fixture.rollouts) {
  for (const [name, adapt] of Object.entries(adapters)) {
    test(`${rollout.task.kind}: ${name} matches Python`, () => {
      assert.deepEqual(adapt(rollout.spans), rollout.expected[name]);
    });
  }
  test(`${rollout.task.kind}: without its reward spans no triplet has a reward`, () => {
    const noRewards = rollout.spans.filter((s) => !Object.keys(s.attributes).some((k) => k.startsWith('agentlightning.reward')));
    for (const adapt of Object.values(adapters)) assert.ok(adapt(noRewards).every((t) => t.reward === null));
  });
}

const byKind = (kind: string) => fixture.rollouts.find((r) => r.task.kind === kind)!;

test('multi-turn rollout: rewards by time go to turns 1 and 3; by sequence id to turns 3 and 2', () => {
  const spans = byKind('multi').spans;
  assert.deepEqual(tracerTraceToTriplet(spans).map((t) => t.reward), [0.25, null, 0.75]);
  assert.deepEqual(llmProxyTraceToTriplet(spans).map((t) => t.reward), [null, 0.75, 0.25]);
});

test('untokenised helper call: the seed adapter skips it, so the reward reaches the policy call', () => {
  const spans = byKind('untokenised').spans;
  assert.deepEqual(tracerTraceToTriplet(spans).map((t) => t.reward), [null, 1]);
  const seed = makeTripletAdapter({ adapterFromLlmProxy: false });
  assert.deepEqual(seed(spans).map((t) => t.reward), [1]);
});

test('recorded multi-turn rollout reconstructs into a prefix-extending trajectory with logprobs', () => {
  const { trajectory, notes } = reconstructTransitions(makeTripletAdapter({ adapterFromLlmProxy: false })(byKind('multi').spans));
  assert.equal(trajectory.transitions.length, 3);
  assert.deepEqual(notes, { skippedNoTokenIds: 0, skippedEmptyTokenIds: 0, missingLogprobs: 0, logprobCountMismatch: 0 });
  const [t1, t2] = trajectory.transitions;
  assert.deepEqual(t2!.ob.slice(0, t1!.ob.length + t1!.acTokens.length), [...t1!.ob, ...t1!.acTokens]);
  assert.equal(t1!.acLogprobs!.length, t1!.acTokens.length);
  assert.deepEqual(trajectory.transitions.map((t) => t.reward), [0.25, 0, 0.75]);
  assert.deepEqual(trajectory.transitions.map((t) => t.episodeDone), [false, false, true]);
  // Each prompt extends the previous prompt + reply, so the three turns merge into one datum.
  const data = trajectoryToData(trajectory, 0.5);
  assert.equal(data.length, 1);
  const t3 = trajectory.transitions[2]!;
  assert.equal(data[0]!.modelInput.length, t3.ob.length + t3.acTokens.length - 1);
  const trained = data[0]!.lossFnInputs.mask!.reduce((a, b) => a + b, 0);
  assert.equal(trained, trajectory.transitions.reduce((a, t) => a + t.acTokens.length, 0));
});

test('makeTripletAdapter refuses agentMatch with proxy spans, as the seed', () => {
  assert.throws(() => makeTripletAdapter({ adapterFromLlmProxy: true, adapterAgentMatch: 'x' }), /not supported/);
  assert.deepEqual(makeTripletAdapter({ adapterFromLlmProxy: true })(byKind('single').spans), byKind('single').expected.llm_proxy);
});
