// Pure pieces of the proxy: routing, user stop strings across multi-byte tokens, policy body defaults.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getTokenizer } from '../../chat';
import { applyUserStops } from '../../proxy/answer';
import { DEFAULT_SAMPLING, fingerprint, parsePolicySpec } from '../../proxy/policy-spec';
import { routeOf } from '../../proxy/routes';

test('routes: plain, rollout-scoped (with and without /v1), models, admin only unscoped', () => {
  assert.deepEqual(routeOf('/v1/chat/completions?x=1'), { route: { kind: 'call', api: 'chat' }, scope: null });
  assert.deepEqual(routeOf('/rollout/ro-1/attempt/at-2/chat/completions'), { route: { kind: 'call', api: 'chat' }, scope: { rolloutId: 'ro-1', attemptId: 'at-2' } });
  for (const api of ['responses', 'messages', 'completions'] as const) {
    assert.deepEqual(routeOf(`/v1/${api}`).route, { kind: 'call', api });
    assert.deepEqual(routeOf(`/rollout/r/attempt/a/${api}/`), { route: { kind: 'call', api }, scope: { rolloutId: 'r', attemptId: 'a' } });
  }
  assert.equal(routeOf('/v1/v1/responses').route.kind, 'not-found');
  assert.deepEqual(routeOf('/rollout/ro%201/attempt/at-2/v1/chat/completions/').scope, { rolloutId: 'ro 1', attemptId: 'at-2' });
  assert.deepEqual(routeOf('/v1/models/Qwen/Qwen3-8B').route, { kind: 'model', id: 'Qwen/Qwen3-8B' });
  assert.equal(routeOf('/rollout/r/attempt/a/v1/models').route.kind, 'models');
  assert.equal(routeOf('/admin/policy').route.kind, 'admin-policy');
  assert.equal(routeOf('/rollout/r/attempt/a/admin/policy').route.kind, 'not-found');
  assert.equal(routeOf('/rollout/r/attempt/a').route.kind, 'not-found');
});

test('user stop strings: cut at the token that completes the stop, even inside a multi-byte character', () => {
  const tok = getTokenizer('local/x');
  const tokens = tok.encode('ab☕cd');
  const seq = { tokens, logprobs: tokens.map((_, i) => -i), stopReason: 'length' as const };
  const cut = applyUserStops(tok, seq, ['☕'])!;
  assert.equal(cut.content, 'ab');
  assert.deepEqual(cut.seq.tokens, tok.encode('ab☕'));
  assert.deepEqual(cut.seq.logprobs, [-0, -1, -2, -3, -4]);
  assert.equal(cut.seq.stopReason, 'stop');
  assert.equal(cut.stop, '☕');
  assert.equal(applyUserStops(tok, seq, ['zz']), null);
  assert.equal(applyUserStops(tok, seq, []), null);
});

test('policy body: defaults, renderer by model, fingerprint ignores switchId only', () => {
  const p = parsePolicySpec({ switchId: 's', modelName: 'Qwen/Qwen3-4B-Instruct-2507', baseModel: 'Qwen/Qwen3-4B-Instruct-2507', samplerPath: null });
  assert.equal(p.renderer, 'qwen3_instruct');
  assert.deepEqual(p.sampling, DEFAULT_SAMPLING);
  assert.equal(parsePolicySpec({ switchId: 's', modelName: 'meta-llama/Llama-3.1-8B-Instruct', baseModel: 'meta-llama/Llama-3.1-8B-Instruct' }).renderer, 'llama3');
  assert.equal(parsePolicySpec({ switchId: 's', modelName: 'Qwen/Qwen3-8B-Base', baseModel: 'Qwen/Qwen3-8B-Base' }).renderer, 'role_colon');
  assert.equal(parsePolicySpec({ switchId: 's', modelName: 'Qwen/Qwen3-8B', baseModel: 'Qwen/Qwen3-8B' }).renderer, 'qwen3');
  const q = parsePolicySpec({ switchId: 't', modelName: 'Qwen/Qwen3-4B-Instruct-2507', baseModel: 'Qwen/Qwen3-4B-Instruct-2507', sampling: { topK: 0 } });
  assert.equal(q.sampling.topK, -1);
  assert.equal(fingerprint(p), fingerprint(q));
  assert.notEqual(fingerprint(p), fingerprint({ ...q, sampling: { ...q.sampling, temperature: 0.5 } }));
});
