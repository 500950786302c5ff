// Round trips of the Tinker wire encodings (JSON and protobuf) that client and server share.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  forwardBackwardOutputFromJson,
  forwardBackwardOutputFromProto,
  forwardBackwardOutputToJson,
  forwardBackwardOutputToProto,
  forwardBackwardRequestFromProto,
  forwardBackwardRequestToProto,
  sampleResultFromJson,
  sampleResultFromProto,
  sampleResultToJson,
  sampleResultToProto,
  datumFromJson,
  datumToJson,
  WireFormatError,
} from '../../tinker/wire/codec';

const f32 = (x: number) => Math.fround(x);
const token = fc.integer({ min: 0, max: 200_000 });
// -0 is excluded: JSON has no negative zero.
const float = fc.float({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }).map((x) => (x === 0 ? 0 : f32(x)));

test('forward_backward request survives protobuf', () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 1, max: 20 }).chain((n) => fc.record({ tokens: fc.array(token, { minLength: n, maxLength: n }), lps: fc.array(float, { minLength: n, maxLength: n }) })), { minLength: 1, maxLength: 4 }),
      fc.boolean(),
      (rows, forwardOnly) => {
        const data = rows.map((r) => ({ modelInput: r.tokens, lossFnInputs: { target_tokens: r.tokens, logprobs: r.lps, advantages: r.lps } }));
        const req = { modelId: 's:train:0', seqId: 7, data, lossFn: 'ppo', lossFnConfig: { clip_low_threshold: 0.5 }, forwardOnly };
        assert.deepEqual(forwardBackwardRequestFromProto(forwardBackwardRequestToProto(req)), req);
      },
    ),
  );
});

test('forward_backward output survives protobuf and JSON', () => {
  fc.assert(
    fc.property(fc.array(fc.array(float, { maxLength: 30 }), { minLength: 1, maxLength: 5 }), float, (lps, loss) => {
      const r = { lossFnOutputType: 'ArrayRecord', lossFnOutputs: lps.map((l) => ({ logprobs: l })), metrics: { 'loss:sum': loss } };
      assert.deepEqual(forwardBackwardOutputFromProto(forwardBackwardOutputToProto(r)), r);
      assert.deepEqual(forwardBackwardOutputFromJson(JSON.parse(JSON.stringify(forwardBackwardOutputToJson(r)))), r);
    }),
  );
});

test('sample result survives protobuf (null first prompt logprob) and JSON', () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 1, max: 10 }).chain((n) => fc.record({ tokens: fc.array(token, { minLength: n, maxLength: n }), logprobs: fc.array(float, { minLength: n, maxLength: n }), stopReason: fc.constantFrom('stop' as const, 'length' as const) })), { minLength: 1, maxLength: 4 }),
      fc.option(fc.array(float, { minLength: 1, maxLength: 10 })),
      (sequences, plps) => {
        const r = { sequences: sequences.map((q) => ({ ...q })), promptLogprobs: plps ? [null, ...plps] : null };
        assert.deepEqual(sampleResultFromProto(sampleResultToProto(r)), r);
        assert.deepEqual(sampleResultFromJson(JSON.parse(JSON.stringify(sampleResultToJson(r)))), r);
      },
    ),
  );
});

test('JSON datums: typed tensors, plain lists and chunks without a type are accepted', () => {
  const d = { modelInput: [1, 2, 3], lossFnInputs: { target_tokens: [2, 3, 4], weights: [1, 1, 0] } };
  const wire = datumToJson(d);
  assert.deepEqual(wire.loss_fn_inputs.target_tokens, { data: [2, 3, 4], dtype: 'int64', shape: [3] });
  assert.deepEqual(datumFromJson(wire), d);
  assert.deepEqual(datumFromJson({ model_input: { chunks: [{ tokens: [1] }, { tokens: [2, 3] }] }, loss_fn_inputs: { target_tokens: [2, 3, 4], weights: [1, 1, 0] } }), d);
  assert.throws(() => datumFromJson({ model_input: { chunks: [{ tokens: [1.5] }] }, loss_fn_inputs: {} }), WireFormatError);
  assert.throws(() => datumFromJson({ model_input: {}, loss_fn_inputs: {} }), WireFormatError);
  assert.throws(() => datumFromJson({ model_input: { chunks: [] }, loss_fn_inputs: { w: { data: [[1, 2]], dtype: 'float32', shape: [1, 2] } } }), WireFormatError);
});
