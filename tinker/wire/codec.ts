// Conversions between our plain values and the Tinker wire forms (JSON and protobuf), used by both the
// client (encode requests, decode results) and the local server (decode requests, encode results).
import {
  bytesToBfloat16,
  bytesToFloat32,
  bytesToInt32,
  bytesToInt64,
  float32ToBytes,
  int32ToBytes,
  int64ToBytes,
  toNumber,
} from './bytes';
import { DType, StopReasonCode, pb } from './proto-schema';
import {
  IMAGE_PLACEHOLDER_TOKEN,
  INT_KEYS,
  type Datum,
  type ModelInputChunk,
  type PromptInput,
  type ForwardBackwardResult,
  type SampleResult,
  type StopReason,
  type WireChunk,
  type WireDatum,
  type WireForwardBackwardOutput,
  type WireModelInput,
  type WireSampleResponse,
  type WireTensorData,
} from './types';

/** Malformed wire data; the server answers it as a user error. */
export class WireFormatError extends Error {
  override readonly name = 'WireFormatError';
}

/** protobufjs leaves absent bytes fields as an empty array (not a Uint8Array) on decoded messages. */
function asBytes(v: unknown): Uint8Array {
  if (v instanceof Uint8Array) return v;
  if (Array.isArray(v)) return Uint8Array.from(v as number[]);
  return new Uint8Array();
}

function fail(msg: string): never {
  throw new WireFormatError(msg);
}

// ---- model input and datums (JSON) ----

/** Token ids as one text chunk; chunks as given (empty text chunks left out: the service refuses them). */
export function modelInputToJson(input: PromptInput): WireModelInput {
  if (input.length === 0 || typeof input[0] === 'number') return { chunks: [{ type: 'encoded_text', tokens: input as number[] }] };
  return { chunks: (input as ModelInputChunk[]).filter((c) => c.type !== 'encoded_text' || c.tokens.length > 0).map((c) => ({ ...c })) };
}

/** Positions a chunk takes: its tokens, or an image's expected tokens. */
export function chunkLength(c: ModelInputChunk): number {
  return c.type === 'encoded_text' ? c.tokens.length : c.expected_tokens;
}

/** The flat view of chunks: token ids, an image as expected_tokens placeholder positions. */
export function flattenChunks(chunks: readonly ModelInputChunk[]): number[] {
  const out: number[] = [];
  for (const c of chunks) {
    if (c.type === 'encoded_text') for (const t of c.tokens) out.push(t);
    else for (let i = 0; i < c.expected_tokens; i++) out.push(IMAGE_PLACEHOLDER_TOKEN);
  }
  return out;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function imageChunkFrom(c: WireChunk, what: string): ModelInputChunk {
  if (typeof c.data !== 'string' || c.data.length === 0 || c.data.length % 4 !== 0 || !BASE64.test(c.data)) fail(`${what}.data must be the image's bytes in base64`);
  if (c.format !== 'png' && c.format !== 'jpeg') fail(`${what}.format must be "png" or "jpeg", got ${JSON.stringify(c.format)}`);
  const n = c.expected_tokens;
  if (typeof n !== 'number' || !Number.isInteger(n) || n <= 0) fail(`${what}.expected_tokens must be a positive integer (the positions the image takes)`);
  return { type: 'image', data: c.data as string, format: c.format, expected_tokens: n };
}

/** The chunks of a ModelInput, checked: text chunks of integer ids and image chunks. */
export function modelInputChunksFromJson(input: unknown, what = 'model_input'): ModelInputChunk[] {
  if (!input || typeof input !== 'object' || !Array.isArray((input as WireModelInput).chunks)) {
    fail(`${what} must be an object with a "chunks" array`);
  }
  return (input as WireModelInput).chunks.map((chunk, i): ModelInputChunk => {
    const c = chunk as WireChunk;
    const type = c.type ?? (Array.isArray(c.tokens) ? 'encoded_text' : undefined);
    if (type === 'image') return imageChunkFrom(c, `${what}.chunks[${i}]`);
    if (type !== 'encoded_text') fail(`${what}.chunks[${i}]: chunk type ${JSON.stringify(c.type)} is not supported (encoded_text, image)`);
    if (!Array.isArray(c.tokens)) fail(`${what}.chunks[${i}].tokens must be an array of token ids`);
    for (const t of c.tokens) if (!Number.isInteger(t)) fail(`${what}.chunks[${i}].tokens must hold integers, got ${JSON.stringify(t)}`);
    return { type: 'encoded_text', tokens: c.tokens };
  });
}

/** Flattens the chunks of a ModelInput (an image as placeholder positions: the local models cannot see). */
export function modelInputFromJson(input: unknown, what = 'model_input'): number[] {
  return flattenChunks(modelInputChunksFromJson(input, what));
}

export function tensorToJson(key: string, values: number[]): WireTensorData {
  return { data: values, dtype: INT_KEYS.has(key) ? 'int64' : 'float32', shape: [values.length] };
}

export function tensorFromJson(t: unknown, what: string): number[] {
  if (Array.isArray(t)) return numbers(t, what);
  if (!t || typeof t !== 'object' || !Array.isArray((t as WireTensorData).data)) fail(`${what} must be a TensorData {data, dtype}`);
  const td = t as WireTensorData;
  const data = numbers(td.data, what);
  if (td.shape && td.shape.length > 1) fail(`${what}: only 1-D tensors are supported, got shape ${JSON.stringify(td.shape)}`);
  return data;
}

function numbers(arr: unknown[], what: string): number[] {
  for (const v of arr) if (typeof v !== 'number' || !Number.isFinite(v)) fail(`${what} must hold finite numbers`);
  return arr as number[];
}

export function datumToJson(d: Datum): WireDatum {
  const inputs: Record<string, WireTensorData> = {};
  for (const [k, v] of Object.entries(d.lossFnInputs)) inputs[k] = tensorToJson(k, v);
  return { model_input: modelInputToJson(d.chunks ?? d.modelInput), loss_fn_inputs: inputs };
}

export function datumFromJson(d: unknown, what = 'datum'): Datum {
  if (!d || typeof d !== 'object') fail(`${what} must be an object`);
  const w = d as Partial<WireDatum>;
  const chunks = modelInputChunksFromJson(w.model_input, `${what}.model_input`);
  const lossFnInputs: Record<string, number[]> = {};
  if (!w.loss_fn_inputs || typeof w.loss_fn_inputs !== 'object') fail(`${what}.loss_fn_inputs must be an object`);
  for (const [k, v] of Object.entries(w.loss_fn_inputs)) lossFnInputs[k] = tensorFromJson(v, `${what}.loss_fn_inputs.${k}`);
  const datum: Datum = { modelInput: flattenChunks(chunks), lossFnInputs };
  if (chunks.some((c) => c.type === 'image')) datum.chunks = chunks;
  return datum;
}

// ---- forward_backward request (protobuf) ----

export interface ForwardBackwardRequest {
  modelId: string;
  seqId: number;
  data: Datum[];
  lossFn: string;
  lossFnConfig?: Record<string, number>;
  forwardOnly: boolean;
}

export function forwardBackwardRequestToProto(r: ForwardBackwardRequest): Uint8Array {
  const data = r.data.map((d) => {
    const inputs: Record<string, object> = {};
    for (const [k, v] of Object.entries(d.lossFnInputs)) {
      const isInt = INT_KEYS.has(k);
      inputs[k] = { dense: isInt ? int64ToBytes(v) : float32ToBytes(v), dtype: isInt ? DType.INT64 : DType.FLOAT32, shape: [v.length] };
    }
    const chunks = d.chunks ?? [{ type: 'encoded_text' as const, tokens: d.modelInput }];
    const modelInput = chunks.map((c) =>
      c.type === 'encoded_text'
        ? { encoded_text: { tokens: int32ToBytes(c.tokens) } }
        : { image: { data: Buffer.from(c.data, 'base64'), format: c.format, expected_tokens: c.expected_tokens } },
    );
    return { model_input: modelInput, loss_fn_inputs: inputs };
  });
  const cfg = r.lossFnConfig ?? {};
  const v2: Record<string, object> = {};
  for (const [k, v] of Object.entries(cfg)) v2[k] = { number: v };
  const msg = pb.ForwardBackwardRequest.fromObject({
    model_id: r.modelId,
    seq_id: r.seqId,
    data,
    loss_fn: r.lossFn,
    loss_fn_config: cfg,
    loss_fn_config_v2: v2,
    forward_only: r.forwardOnly,
  });
  return pb.ForwardBackwardRequest.encode(msg).finish();
}

function tensorFromProto(t: Record<string, unknown>, what: string): number[] {
  const dtype = toNumber(t.dtype ?? 0);
  if (t.sparse_csr) fail(`${what}: sparse tensors are not supported`);
  const dense = asBytes(t.dense);
  const shape = ((t.shape as unknown[]) ?? []).map(toNumber);
  if (shape.length > 1) fail(`${what}: only 1-D tensors are supported, got shape ${JSON.stringify(shape)}`);
  try {
    switch (dtype) {
      case DType.FLOAT32:
        return bytesToFloat32(dense);
      case DType.INT64:
        return bytesToInt64(dense);
      case DType.INT32:
        return bytesToInt32(dense);
      case DType.BFLOAT16:
        return bytesToBfloat16(dense);
      default:
        return fail(`${what}: unsupported dtype ${dtype}`);
    }
  } catch (err) {
    if (err instanceof WireFormatError) throw err;
    return fail(`${what}: ${(err as Error).message}`);
  }
}

export function forwardBackwardRequestFromProto(body: Uint8Array): ForwardBackwardRequest {
  let msg: Record<string, unknown>;
  try {
    msg = pb.ForwardBackwardRequest.decode(body) as unknown as Record<string, unknown>;
  } catch (err) {
    return fail(`forward_backward: bad protobuf body: ${(err as Error).message}`);
  }
  const data = ((msg.data as Record<string, unknown>[]) ?? []).map((d, i): Datum => {
    const chunks: ModelInputChunk[] = [];
    for (const [j, chunk] of ((d.model_input as Record<string, unknown>[]) ?? []).entries()) {
      const text = chunk.encoded_text as { tokens?: Uint8Array } | undefined;
      const image = chunk.image as { data?: Uint8Array; format?: string; expected_tokens?: unknown } | undefined;
      if (image) {
        const data = asBytes(image.data);
        const n = image.expected_tokens === undefined || image.expected_tokens === null ? undefined : toNumber(image.expected_tokens);
        if (data.length === 0) fail(`data[${i}].model_input[${j}]: an image chunk needs its bytes`);
        if (image.format !== 'png' && image.format !== 'jpeg') fail(`data[${i}].model_input[${j}]: image format must be png or jpeg, got ${JSON.stringify(image.format)}`);
        if (n === undefined || !Number.isInteger(n) || n <= 0) fail(`data[${i}].model_input[${j}]: an image chunk needs expected_tokens (the positions it takes)`);
        chunks.push({ type: 'image', data: Buffer.from(data).toString('base64'), format: image.format, expected_tokens: n });
        continue;
      }
      if (!text) fail(`data[${i}].model_input[${j}]: only encoded_text and image chunks are supported`);
      try {
        chunks.push({ type: 'encoded_text', tokens: bytesToInt32(asBytes(text.tokens)) });
      } catch (err) {
        fail(`data[${i}].model_input[${j}]: ${(err as Error).message}`);
      }
    }
    const modelInput = flattenChunks(chunks);
    const lossFnInputs: Record<string, number[]> = {};
    for (const [k, t] of Object.entries((d.loss_fn_inputs as Record<string, Record<string, unknown>>) ?? {})) {
      lossFnInputs[k] = tensorFromProto(t, `data[${i}].loss_fn_inputs.${k}`);
    }
    const datum: Datum = { modelInput, lossFnInputs };
    if (chunks.some((c) => c.type === 'image')) datum.chunks = chunks;
    return datum;
  });
  // loss_fn_config_v2 wins when present (newer SDKs write both); text values are not used by our losses.
  const lossFnConfig: Record<string, number> = { ...((msg.loss_fn_config as Record<string, number>) ?? {}) };
  for (const [k, v] of Object.entries((msg.loss_fn_config_v2 as Record<string, { number?: number }>) ?? {})) {
    if (typeof v.number === 'number') lossFnConfig[k] = v.number;
  }
  return {
    modelId: String(msg.model_id ?? ''),
    seqId: toNumber(msg.seq_id ?? 0),
    data,
    lossFn: String(msg.loss_fn ?? ''),
    lossFnConfig,
    forwardOnly: Boolean(msg.forward_only),
  };
}

// ---- forward_backward output ----

export function forwardBackwardOutputToJson(r: ForwardBackwardResult): WireForwardBackwardOutput {
  return {
    loss_fn_output_type: r.lossFnOutputType,
    loss_fn_outputs: r.lossFnOutputs.map((rec) => {
      const out: Record<string, WireTensorData> = {};
      for (const [k, v] of Object.entries(rec)) out[k] = tensorToJson(k, v);
      return out;
    }),
    metrics: r.metrics,
  };
}

export function forwardBackwardOutputFromJson(w: WireForwardBackwardOutput): ForwardBackwardResult {
  return {
    lossFnOutputType: w.loss_fn_output_type,
    lossFnOutputs: w.loss_fn_outputs.map((rec, i) => {
      const out: Record<string, number[]> = {};
      for (const [k, v] of Object.entries(rec)) out[k] = tensorFromJson(v, `loss_fn_outputs[${i}].${k}`);
      return out;
    }),
    metrics: w.metrics ?? {},
  };
}

/** One ArrayRecord; each field is every datum's array concatenated, with int64 byte offsets. */
export function forwardBackwardOutputToProto(r: ForwardBackwardResult): Uint8Array {
  const keys = r.lossFnOutputs.length > 0 ? Object.keys(r.lossFnOutputs[0]) : [];
  const fields: Record<string, object> = {};
  for (const key of keys) {
    const isInt = INT_KEYS.has(key);
    const width = isInt ? 8 : 4;
    const flat: number[] = [];
    const offsets = [0];
    for (const rec of r.lossFnOutputs) {
      for (const v of rec[key] ?? []) flat.push(v);
      offsets.push(flat.length * width);
    }
    fields[key] = {
      data: isInt ? int64ToBytes(flat) : float32ToBytes(flat),
      offsets: int64ToBytes(offsets),
      dtype: isInt ? DType.INT64 : DType.FLOAT32,
      trailing_shape: [],
    };
  }
  const msg = pb.ForwardBackwardOutput.fromObject({
    loss_fn_output_type: r.lossFnOutputType,
    loss_fn_outputs: [{ type_tag: r.lossFnOutputType, fields, num_datums: r.lossFnOutputs.length }],
    metrics: r.metrics,
  });
  return pb.ForwardBackwardOutput.encode(msg).finish();
}

export function forwardBackwardOutputFromProto(body: Uint8Array): ForwardBackwardResult {
  // Decoded messages carry proto3 defaults on their prototype; toObject is avoided (it trips on absent bytes).
  const msg = pb.ForwardBackwardOutput.decode(body) as unknown as {
    loss_fn_output_type: string;
    loss_fn_outputs: { fields: Record<string, { data: Uint8Array; offsets: Uint8Array; dtype: number }>; num_datums: unknown }[];
    metrics: Record<string, number>;
  };
  const outputs: Record<string, number[]>[] = [];
  for (const record of msg.loss_fn_outputs) {
    const n = toNumber(record.num_datums);
    const chunk: Record<string, number[]>[] = Array.from({ length: n }, () => ({}));
    for (const [key, bt] of Object.entries(record.fields)) {
      const dtype = toNumber(bt.dtype);
      const width = dtype === DType.INT64 ? 8 : dtype === DType.BFLOAT16 ? 2 : 4;
      const values = tensorFromProto({ dense: bt.data, dtype }, `loss_fn_outputs.${key}`);
      const offsets = bytesToInt64(asBytes(bt.offsets));
      for (let i = 0; i + 1 < offsets.length; i++) {
        (chunk[i] ??= {})[key] = values.slice(offsets[i] / width, offsets[i + 1] / width);
      }
    }
    outputs.push(...chunk);
  }
  const type = msg.loss_fn_output_type || 'ArrayRecord';
  return { lossFnOutputType: type.slice(type.lastIndexOf(':') + 1), lossFnOutputs: outputs, metrics: msg.metrics ?? {} };
}

// ---- sample response ----

export function sampleResultToJson(r: SampleResult): WireSampleResponse {
  return {
    sequences: r.sequences.map((s) => ({ tokens: s.tokens, logprobs: s.logprobs, stop_reason: s.stopReason })),
    prompt_logprobs: r.promptLogprobs,
    type: 'sample',
  };
}

export function sampleResultFromJson(w: WireSampleResponse): SampleResult {
  return {
    sequences: w.sequences.map((s) => ({ tokens: s.tokens, logprobs: s.logprobs ?? null, stopReason: s.stop_reason })),
    promptLogprobs: w.prompt_logprobs ?? null,
  };
}

/** Prompt logprobs travel as float32 with NaN where undefined (position 0). */
export function sampleResultToProto(r: SampleResult): Uint8Array {
  const obj: Record<string, unknown> = {
    sequences: r.sequences.map((s) => {
      const seq: Record<string, unknown> = { stop_reason: StopReasonCode[s.stopReason], tokens: int32ToBytes(s.tokens) };
      if (s.logprobs) seq.logprobs = float32ToBytes(s.logprobs);
      return seq;
    }),
  };
  if (r.promptLogprobs) obj.prompt_logprobs = float32ToBytes(r.promptLogprobs.map((v) => (v === null ? NaN : v)));
  return pb.SampleResponse.encode(pb.SampleResponse.fromObject(obj)).finish();
}

export function sampleResultFromProto(body: Uint8Array): SampleResult {
  const msg = pb.SampleResponse.decode(body) as unknown as {
    sequences?: { stop_reason?: number; tokens?: Uint8Array; logprobs?: Uint8Array }[];
    prompt_logprobs?: Uint8Array;
  };
  const stopReason = (code: number | undefined): StopReason => (code === StopReasonCode.length ? 'length' : 'stop');
  return {
    sequences: (msg.sequences ?? []).map((s) => ({
      tokens: bytesToInt32(asBytes(s.tokens)),
      logprobs: asBytes(s.logprobs).byteLength > 0 ? bytesToFloat32(asBytes(s.logprobs)) : null,
      stopReason: stopReason(s.stop_reason),
    })),
    promptLogprobs:
      asBytes(msg.prompt_logprobs).byteLength > 0
        ? bytesToFloat32(asBytes(msg.prompt_logprobs)).map((v) => (Number.isNaN(v) ? null : v))
        : null,
  };
}
