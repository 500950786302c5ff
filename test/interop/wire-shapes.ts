// What the wire-parity test compares of a recorded request: its endpoint with ids taken out of the path, its
// header names, the key paths of its JSON body, and its protobuf forward_backward body decoded.
import type { Recorded } from '../tinker/recording-proxy';
import { forwardBackwardRequestFromProto, type ForwardBackwardRequest } from '../../tinker/wire/codec';
import { zstdDecompress } from '../../tinker/wire/zstd';

/** Headers of the connection rather than of the protocol. */
const TRANSPORT_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'accept-encoding', 'keep-alive']);

export function endpoint(r: Pick<Recorded, 'method' | 'path'>): string {
  const p = r.path
    .replace(/^\/sessions\/[^/]+\//, '/sessions/{session}/')
    .replace(/^\/training_runs\/[^/]+/, '/training_runs/{run}')
    .replace(/\/checkpoints\/(weights|sampler_weights)\/[^/]+/, '/checkpoints/{checkpoint}')
    .replace(/^\/samplers\/.+$/, '/samplers/{sampler}');
  return `${r.method} ${p}`;
}

export function headerNames(r: Recorded): string[] {
  return Object.keys(r.headers)
    .map((h) => h.toLowerCase())
    .filter((h) => !TRANSPORT_HEADERS.has(h));
}

/** "a", "a.b", "a.b[].c" … of a JSON value. */
export function keyPaths(v: unknown, prefix = ''): string[] {
  if (Array.isArray(v)) return v.flatMap((x) => keyPaths(x, `${prefix}[]`));
  if (v && typeof v === 'object') {
    return Object.entries(v).flatMap(([k, x]) => {
      const p = prefix ? `${prefix}.${k}` : k;
      return [p, ...keyPaths(x, p)];
    });
  }
  return [];
}

export interface Decoded {
  endpoint: string;
  headers: string[];
  json?: unknown;
  proto?: ForwardBackwardRequest;
  record: Recorded;
}

export async function decode(r: Recorded): Promise<Decoded> {
  let body: Uint8Array = r.body;
  if (r.headers['content-encoding'] === 'zstd') body = await zstdDecompress(body, 1 << 28);
  const base = { endpoint: endpoint(r), headers: headerNames(r), record: r };
  if ((r.headers['content-type'] ?? '').includes('application/x-protobuf')) return { ...base, proto: forwardBackwardRequestFromProto(body) };
  return { ...base, json: body.byteLength ? JSON.parse(Buffer.from(body).toString('utf8')) : undefined };
}

/** endpoint → the union over its requests of f(request). */
export function unionBy(records: Decoded[], f: (d: Decoded) => string[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const d of records) {
    const set = out.get(d.endpoint) ?? new Set<string>();
    for (const x of f(d)) set.add(x);
    out.set(d.endpoint, set);
  }
  return out;
}

export const minus = (a: Iterable<string>, b: Set<string>) => [...a].filter((x) => !b.has(x)).sort();
