// Reading and decoding request bodies: a size limit, gzip/deflate, and JSON that tolerates Python's
// NaN/Infinity tokens (json.dumps emits them; §2.1, §10 item 14).
import type { IncomingMessage } from 'node:http';
import { gunzipSync, inflateSync } from 'node:zlib';
import { PayloadTooLargeError, StoreError, ValidationError } from './errors';

export async function readBody(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limitBytes) throw new PayloadTooLargeError(limitBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limitBytes) throw new PayloadTooLargeError(limitBytes);
    chunks.push(chunk as Buffer);
  }
  const raw = Buffer.concat(chunks);
  return decompress(raw, String(req.headers['content-encoding'] ?? 'identity').toLowerCase(), limitBytes);
}

function decompress(raw: Buffer, encoding: string, limitBytes: number): Buffer {
  if (raw.length === 0 || encoding === 'identity' || encoding === '') return raw;
  try {
    // maxOutputLength guards against a small gzip bomb expanding past the limit.
    if (encoding === 'gzip' || encoding === 'x-gzip') return gunzipSync(raw, { maxOutputLength: limitBytes });
    if (encoding === 'deflate') return inflateSync(raw, { maxOutputLength: limitBytes });
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new PayloadTooLargeError(limitBytes);
    throw new StoreError(`Cannot decode ${encoding} request body: ${(err as Error).message}`, 400);
  }
  throw new StoreError(`Unsupported Content-Encoding: ${encoding}`, 415);
}

/** Replaces bare NaN / Infinity / -Infinity tokens (outside strings) with null. */
export function replaceNonFiniteTokens(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      out += c;
      if (c === '\\') { out += text[i + 1] ?? ''; i++; } else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') { inString = true; out += c; continue; }
    const token = text.startsWith('NaN', i) ? 'NaN' : text.startsWith('-Infinity', i) ? '-Infinity'
      : text.startsWith('Infinity', i) ? 'Infinity' : null;
    if (token) { out += 'null'; i += token.length - 1; continue; }
    out += c;
  }
  return out;
}

/** Parses a JSON body; an empty body is `undefined`. Malformed JSON → 422 like FastAPI's json_invalid. */
export function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  const text = body.toString('utf8');
  try {
    return JSON.parse(text);
  } catch (first) {
    try {
      const cleaned = replaceNonFiniteTokens(text);
      if (cleaned !== text) return JSON.parse(cleaned);
    } catch { /* fall through to the original error */ }
    const msg = `JSON decode error: ${(first as Error).message}`;
    throw new ValidationError(msg, [{ loc: ['body'], msg, type: 'json_invalid' }]);
  }
}
