// Image chunks on the Tinker wire (JSON and protobuf), both ways: a datum keeps its chunks (bytes, format,
// expected_tokens) and its flat view puts placeholder positions where an image is; malformed image chunks are
// refused with the field named.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { datumFromJson, datumToJson, forwardBackwardRequestFromProto, forwardBackwardRequestToProto, modelInputFromJson, modelInputToJson, WireFormatError } from '../../tinker/wire/codec';
import { IMAGE_PLACEHOLDER_TOKEN, type Datum, type ModelInputChunk } from '../../tinker/wire/types';

const chunks: ModelInputChunk[] = [
  { type: 'encoded_text', tokens: [5, 6] },
  { type: 'image', data: Buffer.from('not really a png').toString('base64'), format: 'png', expected_tokens: 3 },
  { type: 'encoded_text', tokens: [7] },
];
const P = IMAGE_PLACEHOLDER_TOKEN;
const datum: Datum = {
  modelInput: [5, 6, P, P, P, 7],
  chunks,
  lossFnInputs: { target_tokens: [6, 0, 0, 0, 7, 8], weights: [1, 0, 0, 0, 1, 1] },
};

test('JSON: a datum with an image chunk round-trips, and its flat view has the placeholder positions', () => {
  const wire = datumToJson(datum);
  assert.deepEqual(wire.model_input.chunks, chunks);
  const back = datumFromJson(JSON.parse(JSON.stringify(wire)));
  assert.deepEqual(back.chunks, chunks);
  assert.deepEqual(back.modelInput, [5, 6, P, P, P, 7]);
  assert.deepEqual(modelInputFromJson(modelInputToJson(chunks)), [5, 6, P, P, P, 7]);
});

test('protobuf: forward_backward with an image chunk round-trips', () => {
  const r = forwardBackwardRequestFromProto(forwardBackwardRequestToProto({ modelId: 'm', seqId: 1, data: [datum], lossFn: 'cross_entropy', forwardOnly: false }));
  assert.deepEqual(r.data[0]!.chunks, chunks);
  assert.deepEqual(r.data[0]!.modelInput, datum.modelInput);
  assert.deepEqual(r.data[0]!.lossFnInputs.target_tokens, datum.lossFnInputs.target_tokens);
});

test('malformed image chunks are refused naming the field', () => {
  const bad = (c: object) => () => modelInputFromJson({ chunks: [c] }, 'prompt');
  assert.throws(bad({ type: 'image', data: 'AAAA', format: 'gif', expected_tokens: 2 }), (e: Error) => e instanceof WireFormatError && /prompt.chunks\[0\].format/.test(e.message));
  assert.throws(bad({ type: 'image', data: 'AAAA', format: 'png' }), /expected_tokens must be a positive integer/);
  assert.throws(bad({ type: 'image', data: '***', format: 'png', expected_tokens: 1 }), /base64/);
  assert.throws(bad({ type: 'video', data: 'AAAA' }), /not supported \(encoded_text, image\)/);
});
