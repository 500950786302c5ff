// Checkpoint directories: meta.json + weights.bin (+ optimizer.bin). Written into a temp directory
// and renamed into place, so a crash never leaves a half-written checkpoint under the final name.
import { createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { UserError } from '../engine';
import type { ModelConfig } from './config';

export const FORMAT = 'agl-local-model-v1';

export interface CheckpointMeta {
  format: string;
  baseModel: string;
  config: ModelConfig;
  loraRank: number;
  hasOptimizer: boolean;
  adamStep: number;
  weightsSha256: string;
  /** For base models: hash of the build recipe, so a changed recipe rebuilds the cache. */
  recipe?: string;
}

export interface CheckpointData {
  meta: CheckpointMeta;
  params: Float64Array;
  m?: Float64Array;
  v?: Float64Array;
}

const bytesOf = (a: Float64Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

export function sha256(...arrays: Float64Array[]): string {
  const h = createHash('sha256');
  for (const a of arrays) h.update(bytesOf(a));
  return h.digest('hex');
}

function toF64(buf: Buffer): Float64Array {
  const copy = new Float64Array(buf.byteLength / 8);
  bytesOf(copy).set(buf);
  return copy;
}

export async function writeCheckpoint(dir: string, data: CheckpointData): Promise<void> {
  const parent = path.dirname(path.resolve(dir));
  await fs.mkdir(parent, { recursive: true });
  const tmp = `${path.resolve(dir)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  await fs.mkdir(tmp);
  try {
    await fs.writeFile(path.join(tmp, 'weights.bin'), bytesOf(data.params));
    if (data.meta.hasOptimizer && data.m && data.v) {
      await fs.writeFile(path.join(tmp, 'optimizer.bin'), Buffer.concat([bytesOf(data.m), bytesOf(data.v)]));
    }
    await fs.writeFile(path.join(tmp, 'meta.json'), JSON.stringify(data.meta, null, 1));
    // Replace an existing checkpoint of the same name: move it aside, move ours in, drop the old one.
    const old = `${tmp}.old`;
    let hadOld = false;
    try {
      await fs.rename(dir, old);
      hadOld = true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    await fs.rename(tmp, dir);
    if (hadOld) await fs.rm(old, { recursive: true, force: true });
  } catch (e) {
    await fs.rm(tmp, { recursive: true, force: true });
    throw e;
  }
}

export async function readMeta(dir: string): Promise<CheckpointMeta> {
  let text: string;
  try {
    text = await fs.readFile(path.join(dir, 'meta.json'), 'utf8');
  } catch {
    throw new UserError(`no checkpoint at ${dir}`);
  }
  const meta = JSON.parse(text) as CheckpointMeta;
  if (meta.format !== FORMAT) throw new UserError(`${dir} is not a ${FORMAT} checkpoint`);
  return meta;
}

export async function readCheckpoint(dir: string, withOptimizer: boolean): Promise<CheckpointData> {
  const meta = await readMeta(dir);
  const params = toF64(await fs.readFile(path.join(dir, 'weights.bin')));
  if (sha256(params) !== meta.weightsSha256) throw new UserError(`checkpoint ${dir} is corrupt (weights hash mismatch)`);
  if (!withOptimizer || !meta.hasOptimizer) return { meta, params };
  const opt = toF64(await fs.readFile(path.join(dir, 'optimizer.bin')));
  const n = params.length;
  return { meta, params, m: opt.slice(0, n), v: opt.slice(n, 2 * n) };
}
