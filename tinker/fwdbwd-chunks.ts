// Large forward_backward calls go out in chunks, as SDK 0.38 splits them (training_client.py
// `_chunked_requests_generator`): at most `fwdbwd_max_chunk_len` datums and `fwdbwd_max_chunk_bytes_count`
// estimated bytes each (4 bytes a token, a loss input's size in its dtype). The chunks' results are merged as the
// SDK's `combine_fwd_bwd_output_results` does: outputs concatenated in order, each metric reduced by the suffix
// of its key (`name:mean` weighted by the chunk's datum count, `:sum`, `:min`, `:max`, `:slack`, `:hash2`,
// `:unique`); a key without a known reduction, or missing from a chunk, is dropped.
import type { ClientConfig } from './client-config';
import { INT_KEYS, type Datum, type ForwardBackwardResult } from './wire/types';

const BYTES_PER_TOKEN = 4;

export function estimateDatumBytes(d: Datum): number {
  let n = d.modelInput.length * BYTES_PER_TOKEN;
  // An image goes as its bytes (base64 is 4 characters for 3 bytes).
  for (const c of d.chunks ?? []) if (c.type === 'image') n += Math.ceil((c.data.length * 3) / 4);
  for (const [key, values] of Object.entries(d.lossFnInputs)) n += values.length * (INT_KEYS.has(key) ? 8 : 4);
  return n;
}

export function chunkData(data: Datum[], cfg: Pick<ClientConfig, 'fwdbwdMaxChunkLen' | 'fwdbwdMaxChunkBytesCount'>): Datum[][] {
  const chunks: Datum[][] = [];
  let current: Datum[] = [];
  let bytes = 0;
  for (const d of data) {
    const size = estimateDatumBytes(d);
    if ((current.length > 0 && bytes + size > cfg.fwdbwdMaxChunkBytesCount) || current.length === cfg.fwdbwdMaxChunkLen) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(d);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

const mean = (xs: number[], w: number[]) => xs.reduce((a, x, i) => a + x * w[i], 0) / w.reduce((a, b) => a + b, 0);

const REDUCE: Record<string, (xs: number[], w: number[]) => number> = {
  mean,
  sum: (xs) => xs.reduce((a, b) => a + b, 0),
  min: (xs) => Math.min(...xs),
  max: (xs) => Math.max(...xs),
  slack: (xs, w) => Math.max(...xs) - mean(xs, w),
  hash2: (xs) => Number(xs.reduce((a, x) => (a + (BigInt(Math.trunc(x)) & 0xffff_ffff_ffff_ffffn)) & 0xffff_ffff_ffff_ffffn, 0n)),
};

export function combineResults(results: ForwardBackwardResult[]): ForwardBackwardResult {
  if (results.length === 1) return results[0];
  const weights = results.map((r) => r.lossFnOutputs.length);
  const metrics: Record<string, number> = {};
  for (const key of Object.keys(results[0]?.metrics ?? {})) {
    const parts = key.split(':');
    if (parts.length !== 2) throw new Error(`forward_backward metric ${JSON.stringify(key)} is not name:reduction`);
    if (!results.every((r) => key in r.metrics)) continue;
    const values = results.map((r) => r.metrics[key]);
    if (parts[1] === 'unique') {
      metrics[key] = values[0];
      values.slice(1).forEach((v, i) => (metrics[`${key}_${i + 1}`] = v));
    } else if (REDUCE[parts[1]]) {
      metrics[key] = REDUCE[parts[1]](values, weights);
    }
  }
  return {
    lossFnOutputType: results[0]?.lossFnOutputType ?? '',
    lossFnOutputs: results.flatMap((r) => r.lossFnOutputs),
    metrics,
  };
}
