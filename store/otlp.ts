// OTLP trace ingest (§4.6): decode an ExportTraceServiceRequest (protobuf or OTLP/JSON) and convert each span to
// the store's Span. Pure functions; the HTTP handler decides what to do with the result.
import { ExportTraceServiceRequest, ExportTraceServiceResponse, RpcStatus } from './otlp-proto';
import type { AttributeValue, Json, JsonObject, Span } from './types';
import { rewardProblem } from './reward-check';

const ROLLOUT_ATTR = 'agentlightning.rollout_id';
const ATTEMPT_ATTR = 'agentlightning.attempt_id';
const SEQUENCE_ATTR = 'agentlightning.span_sequence_id';

// The decoded message, in protobufjs' camelCase object form (also the OTLP/JSON shape).
interface AnyValueObj {
  stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number | string;
  arrayValue?: { values?: AnyValueObj[] }; kvlistValue?: { values?: KeyValueObj[] }; bytesValue?: Uint8Array | string;
}
interface KeyValueObj { key?: string; value?: AnyValueObj }
interface SpanObj {
  traceId?: Uint8Array | string; spanId?: Uint8Array | string; parentSpanId?: Uint8Array | string; name?: string;
  startTimeUnixNano?: string | number; endTimeUnixNano?: string | number; attributes?: KeyValueObj[];
  events?: { timeUnixNano?: string | number; name?: string; attributes?: KeyValueObj[] }[];
  links?: { traceId?: Uint8Array | string; spanId?: Uint8Array | string; attributes?: KeyValueObj[] }[];
  status?: { code?: number | string; message?: string };
}
interface RequestObj {
  resourceSpans?: { resource?: { attributes?: KeyValueObj[] }; schemaUrl?: string; scopeSpans?: { spans?: SpanObj[] }[] }[];
}

export class OtlpDecodeError extends Error {}

export function decodeProtobufRequest(body: Buffer): RequestObj {
  try {
    const msg = ExportTraceServiceRequest.decode(body);
    return ExportTraceServiceRequest.toObject(msg, { longs: String, enums: Number, defaults: false }) as RequestObj;
  } catch (err) {
    throw new OtlpDecodeError(`Invalid OTLP protobuf body: ${(err as Error).message}`);
  }
}

export function decodeJsonRequest(body: Buffer): RequestObj {
  try {
    const parsed = body.length === 0 ? {} : JSON.parse(body.toString('utf8'));
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('expected a JSON object');
    return parsed as RequestObj;
  } catch (err) {
    throw new OtlpDecodeError(`Invalid OTLP JSON body: ${(err as Error).message}`);
  }
}

export function encodeProtobufResponse(rejected: number, errorMessage: string): Buffer {
  const payload = rejected > 0 ? { partialSuccess: { rejectedSpans: rejected, errorMessage } } : {};
  return Buffer.from(ExportTraceServiceResponse.encode(ExportTraceServiceResponse.fromObject(payload)).finish());
}

export function encodeRpcStatus(code: number, message: string): Buffer {
  return Buffer.from(RpcStatus.encode(RpcStatus.fromObject({ code, message })).finish());
}

/** Ids arrive as bytes (protobuf) or hex strings (OTLP/JSON); some JSON encoders use base64. Output: lowercase hex. */
export function idToHex(id: Uint8Array | string | undefined, width: number): string {
  if (id === undefined || id.length === 0) return '';
  let hex: string;
  if (typeof id !== 'string') hex = Buffer.from(id).toString('hex');
  else if (/^[0-9a-fA-F]+$/.test(id) && id.length % 2 === 0) hex = id.toLowerCase();
  else hex = Buffer.from(id, 'base64').toString('hex');
  return hex.padStart(width, '0');
}

const nanosToSeconds = (v: string | number | undefined): number | null => {
  if (v === undefined || v === null || v === '' || v === 0 || v === '0') return null;
  const ns = BigInt(v);
  return Number(ns / 1_000_000_000n) + Number(ns % 1_000_000_000n) / 1e9; // split keeps sub-microsecond precision
};

/** AnyValue → JSON (arrays → lists, kvlists → objects, bytes → hex, int64 → number). */
export function anyValueToJson(v: AnyValueObj | undefined): Json {
  if (!v) return null;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return Number(v.doubleValue);
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(anyValueToJson);
  if (v.kvlistValue !== undefined) return keyValuesToJson(v.kvlistValue.values);
  if (v.bytesValue !== undefined) return idToHex(v.bytesValue, 0);
  return null;
}

export function keyValuesToJson(kvs: KeyValueObj[] | undefined): JsonObject {
  const out: JsonObject = {};
  for (const kv of kvs ?? []) if (kv.key !== undefined) out[kv.key] = anyValueToJson(kv.value);
  return out;
}

const isPrimitive = (v: Json): v is string | number | boolean => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/**
 * Span attribute values the Python `Span` model accepts: primitives and homogeneous primitive lists.
 * Anything else (kvlists, mixed or nested lists) is kept as a JSON string instead of breaking Python readers;
 * non-finite doubles become strings ("NaN"), nulls are dropped.
 */
export function toAttributeValue(v: Json): AttributeValue | undefined {
  if (v === null) return undefined;
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  if (isPrimitive(v)) return v;
  if (Array.isArray(v) && v.every(isPrimitive) && v.every((x) => typeof x === typeof v[0])
    && v.every((x) => typeof x !== 'number' || Number.isFinite(x))) {
    return v as AttributeValue;
  }
  return JSON.stringify(v);
}

function toAttributes(raw: JsonObject): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const [k, v] of Object.entries(raw)) {
    const converted = toAttributeValue(v);
    if (converted !== undefined) out[k] = converted;
  }
  return out;
}

function parseSequenceId(v: Json | undefined): number | null {
  if (v === undefined || v === null) return null;
  const n = typeof v === 'number' ? v : /^-?\d+$/.test(String(v).trim()) ? Number(String(v).trim()) : NaN;
  return Number.isInteger(n) ? n : null;
}

const STATUS_CODES = ['UNSET', 'OK', 'ERROR'] as const;
function statusCode(code: number | string | undefined): (typeof STATUS_CODES)[number] {
  if (typeof code === 'string') {
    const named = code.replace('STATUS_CODE_', '');
    return (STATUS_CODES as readonly string[]).includes(named) ? (named as (typeof STATUS_CODES)[number]) : 'UNSET';
  }
  return STATUS_CODES[code ?? 0] ?? 'UNSET';
}

export interface ConvertedSpans {
  spans: Span[]; // sequence_id -1 = to be allocated by the store
  rejected: { reason: string; name: string }[];
}

/** Converts a decoded request to store spans; spans without a rollout/attempt id or with a non-finite reward are rejected. */
export function convertRequest(req: RequestObj): ConvertedSpans {
  const spans: Span[] = [];
  const rejected: ConvertedSpans['rejected'] = [];
  for (const rs of req.resourceSpans ?? []) {
    const resourceAttrs = keyValuesToJson(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        const rawAttrs = keyValuesToJson(s.attributes);
        const name = s.name ?? '';
        const pick = (key: string): Json | undefined => rawAttrs[key] ?? resourceAttrs[key] ?? undefined;
        const rolloutId = pick(ROLLOUT_ATTR);
        const attemptId = pick(ATTEMPT_ATTR);
        if (rolloutId === undefined || rolloutId === null || attemptId === undefined || attemptId === null || rolloutId === '' || attemptId === '') {
          rejected.push({ name, reason: `span "${name}" has no ${ROLLOUT_ATTR}/${ATTEMPT_ATTR} attribute` });
          continue;
        }
        const rewardWrong = rewardProblem(name, rawAttrs);
        if (rewardWrong) {
          rejected.push({ name, reason: `span "${name}": ${rewardWrong}` });
          continue;
        }
        const traceId = idToHex(s.traceId, 32) || '0'.repeat(32);
        const spanId = idToHex(s.spanId, 16) || '0'.repeat(16);
        const parentId = idToHex(s.parentSpanId, 16) || null;
        const context = { trace_id: traceId, span_id: spanId, is_remote: false, trace_state: {} };
        spans.push({
          rollout_id: String(rolloutId),
          attempt_id: String(attemptId),
          sequence_id: parseSequenceId(pick(SEQUENCE_ATTR)) ?? -1,
          trace_id: traceId,
          span_id: spanId,
          parent_id: parentId,
          name,
          status: { status_code: statusCode(s.status?.code), description: s.status?.message || null },
          attributes: toAttributes(rawAttrs),
          events: (s.events ?? []).map((e) => ({
            name: e.name ?? '', attributes: toAttributes(keyValuesToJson(e.attributes)), timestamp: nanosToSeconds(e.timeUnixNano),
          })),
          links: (s.links ?? []).map((l) => ({
            context: { trace_id: idToHex(l.traceId, 32), span_id: idToHex(l.spanId, 16), is_remote: false, trace_state: {} },
            attributes: l.attributes && l.attributes.length > 0 ? toAttributes(keyValuesToJson(l.attributes)) : null,
          })),
          start_time: nanosToSeconds(s.startTimeUnixNano),
          end_time: nanosToSeconds(s.endTimeUnixNano),
          context,
          parent: null,
          resource: { attributes: resourceAttrs, schema_url: rs.schemaUrl ?? '' },
        });
      }
    }
  }
  return { spans, rejected };
}
