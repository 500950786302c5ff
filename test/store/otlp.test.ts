// OTLP/HTTP span ingest at /v1/traces: protobuf (plain and gzip) and JSON; ids from resource or span attributes;
// server-side sequence ids; spans for unknown rollouts rejected through OTLP partial success.
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { ExportTraceServiceRequest, ExportTraceServiceResponse, RpcStatus } from '../../store/otlp-proto';
import { postRaw, startTestStore, type TestStore } from './helpers';

const str = (key: string, v: string) => ({ key, value: { stringValue: v } });
const hex = (h: string) => Buffer.from(h, 'hex');

function request(rolloutId: string, attemptId: string, spans: object[]) {
  return {
    resourceSpans: [{
      resource: { attributes: [str('service.name', 'test'), str('agentlightning.rollout_id', rolloutId), str('agentlightning.attempt_id', attemptId)] },
      scopeSpans: [{ spans }],
    }],
  };
}

const protoSpan = (spanId: string, name: string, extra: object = {}) => ({
  traceId: hex('4bf92f3577b34da6a3ce929d0e0e4736'), spanId: hex(spanId), name,
  startTimeUnixNano: '1733800010250000000', endTimeUnixNano: '1733800010500000000',
  status: { code: 1 }, ...extra,
});

describe('OTLP ingest', () => {
  let t: TestStore;
  let rid: string;
  let aid: string;
  before(async () => {
    t = await startTestStore();
    const a = await t.client.startRollout('otlp', { workerId: 'w' });
    rid = a.rollout_id;
    aid = a.attempt.attempt_id;
  });
  after(async () => { await t.close(); });

  test('protobuf + gzip: spans converted as the Python server does', async () => {
    const req = request(rid, aid, [
      protoSpan('00f067aa0ba902b7', 'openai.chat.completion', {
        parentSpanId: hex('a3ce929d0e0e4736'),
        attributes: [
          { key: 'prompt_token_ids', value: { arrayValue: { values: [{ intValue: 1 }, { intValue: 2 }] } } },
          { key: 'gen_ai.usage.total_tokens', value: { intValue: 12 } },
          { key: 'nested', value: { kvlistValue: { values: [str('a', 'b')] } } },
          { key: 'ratio', value: { doubleValue: 0.5 } },
        ],
        events: [{ timeUnixNano: '1733800010300000000', name: 'ev', attributes: [str('k', 'v')] }],
      }),
      protoSpan('00f067aa0ba902b8', 'agentlightning.annotation', {
        attributes: [str('agentlightning.reward.0.name', 'primary'), { key: 'agentlightning.reward.0.value', value: { doubleValue: 1.0 } }],
      }),
    ]);
    const body = gzipSync(ExportTraceServiceRequest.encode(ExportTraceServiceRequest.fromObject(req)).finish());
    const res = await postRaw(`${t.server.url}/v1/traces`, body, { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' });
    assert.equal(res.status, 200);
    const decoded = ExportTraceServiceResponse.toObject(ExportTraceServiceResponse.decode(res.body));
    assert.equal(decoded.partialSuccess, undefined);
    const spans = (await t.client.querySpans(rid, 'latest')).items;
    assert.equal(spans.length, 2);
    const [llm, reward] = spans;
    assert.deepEqual([llm!.sequence_id, reward!.sequence_id], [1, 2]);
    assert.equal(llm!.trace_id, '4bf92f3577b34da6a3ce929d0e0e4736');
    assert.equal(llm!.span_id, '00f067aa0ba902b7');
    assert.equal(llm!.parent_id, 'a3ce929d0e0e4736');
    assert.deepEqual(llm!.attributes['prompt_token_ids'], [1, 2]);
    assert.equal(llm!.attributes['gen_ai.usage.total_tokens'], 12);
    assert.equal(llm!.attributes['nested'], '{"a":"b"}');
    assert.equal(llm!.start_time, 1733800010.25);
    assert.deepEqual(llm!.status, { status_code: 'OK', description: null });
    assert.deepEqual(llm!.events, [{ name: 'ev', attributes: { k: 'v' }, timestamp: 1733800010.3 }]);
    assert.equal(llm!.resource.attributes['agentlightning.rollout_id'], rid);
    assert.equal(llm!.parent, null);
    assert.equal(reward!.attributes['agentlightning.reward.0.value'], 1);
    // Spans act as heartbeats.
    assert.equal((await t.client.getRolloutById(rid))?.status, 'running');
    // Re-sending the same spans is de-duplicated.
    await postRaw(`${t.server.url}/v1/traces`, body, { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' });
    assert.equal((await t.client.querySpans(rid, 'latest')).total, 2);
  });

  test('JSON OTLP with hex ids and an explicit sequence id on the span', async () => {
    const req = request(rid, aid, [{
      traceId: '5bf92f3577b34da6a3ce929d0e0e4736', spanId: '10f067aa0ba902b7', name: 'json.span',
      startTimeUnixNano: '1733800011000000000', endTimeUnixNano: '1733800012000000000',
      attributes: [{ key: 'agentlightning.span_sequence_id', value: { intValue: '40' } }], status: {},
    }]);
    const res = await postRaw(`${t.server.url}/v1/traces`, JSON.stringify(req));
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.text), {});
    const found = (await t.client.querySpans(rid, 'latest', { name: 'json.span' })).items;
    assert.equal(found.length, 1);
    assert.equal(found[0]!.sequence_id, 40);
    assert.equal(found[0]!.span_id, '10f067aa0ba902b7');
    assert.equal(await t.client.getNextSpanSequenceId(rid, aid), 41);
  });

  test('unknown rollouts and missing ids are rejected via partial success; bad bodies → 400 Status', async () => {
    const req = {
      resourceSpans: [
        ...request('ro-ghost', 'at-ghost', [protoSpan('20f067aa0ba902b7', 'ghost')]).resourceSpans,
        { resource: { attributes: [] }, scopeSpans: [{ spans: [protoSpan('30f067aa0ba902b7', 'no-ids')] }] },
        ...request(rid, aid, [protoSpan('40f067aa0ba902b7', 'kept')]).resourceSpans,
      ],
    };
    const res = await postRaw(`${t.server.url}/v1/traces`, Buffer.from(ExportTraceServiceRequest.encode(ExportTraceServiceRequest.fromObject(req)).finish()),
      { 'content-type': 'application/x-protobuf' });
    assert.equal(res.status, 200);
    const decoded = ExportTraceServiceResponse.toObject(ExportTraceServiceResponse.decode(res.body), { longs: Number });
    assert.equal(decoded.partialSuccess.rejectedSpans, 2);
    assert.match(decoded.partialSuccess.errorMessage, /unknown rollout ro-ghost/);
    assert.equal((await t.client.querySpans(rid, 'latest', { name: 'kept' })).total, 1);

    const garbage = await postRaw(`${t.server.url}/v1/traces`, Buffer.from([0xff, 0xff, 0xff]), { 'content-type': 'application/x-protobuf' });
    assert.equal(garbage.status, 400);
    assert.match(RpcStatus.toObject(RpcStatus.decode(garbage.body)).message, /Invalid OTLP protobuf/);
    const wrongType = await postRaw(`${t.server.url}/v1/traces`, 'x', { 'content-type': 'text/plain' });
    assert.equal(wrongType.status, 400);
  });

  test('a reward of 1e308 (as Python emit_reward sends it) is rejected with the reason; the other spans are kept', async () => {
    const huge = protoSpan('50f067aa0ba902b7', 'agentlightning.annotation', {
      attributes: [str('agentlightning.reward.0.name', 'primary'), { key: 'agentlightning.reward.0.value', value: { doubleValue: 1e308 } }],
    });
    const req = request(rid, aid, [huge, protoSpan('60f067aa0ba902b7', 'kept-too')]);
    const res = await postRaw(`${t.server.url}/v1/traces`, Buffer.from(ExportTraceServiceRequest.encode(ExportTraceServiceRequest.fromObject(req)).finish()),
      { 'content-type': 'application/x-protobuf' });
    assert.equal(res.status, 200);
    const decoded = ExportTraceServiceResponse.toObject(ExportTraceServiceResponse.decode(res.body), { longs: Number });
    assert.equal(decoded.partialSuccess.rejectedSpans, 1);
    assert.match(decoded.partialSuccess.errorMessage, /reward 1e\+308 is beyond/);
    assert.equal((await t.client.querySpans(rid, 'latest', { name: 'kept-too' })).total, 1);
    assert.equal((await t.client.querySpans(rid, 'latest', { name: 'agentlightning.annotation' })).items.every((sp) => sp.span_id !== '50f067aa0ba902b7'), true);
  });
});
