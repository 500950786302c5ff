// The trainer's disk use, for its health route: bytes under its data directory (states, samplers, checkpoint
// records and the base models it was given) and the room left on that volume. The walk is asynchronous, one at a
// time, and its answer reused for a while, so asking often never stalls training.
import { lstat, readdir, statfs } from 'node:fs/promises';
import path from 'node:path';

export interface TrainerDiskUse {
  data_bytes: number;
  volume_free_bytes: number;
}

const REUSE_MS = 10_000;

async function bytesUnder(p: string): Promise<number> {
  const st = await lstat(p).catch(() => null); // removed while we walked (an expired state being swept)
  if (!st) return 0;
  if (!st.isDirectory()) return st.size;
  let total = 0;
  for (const name of await readdir(p).catch(() => [] as string[])) total += await bytesUnder(path.join(p, name));
  return total;
}

/** Reads the disk use at most once per REUSE_MS; undefined while the directory does not exist yet. */
export function diskUseReader(dataDir: string, now: () => number = Date.now): () => Promise<TrainerDiskUse | undefined> {
  let last: { at: number; use: Promise<TrainerDiskUse | undefined> } | undefined;
  const read = async (): Promise<TrainerDiskUse | undefined> => {
    const fs = await statfs(dataDir).catch(() => null);
    if (!fs) return undefined;
    return { data_bytes: await bytesUnder(dataDir), volume_free_bytes: Number(fs.bavail) * Number(fs.bsize) };
  };
  return () => {
    if (!last || now() - last.at >= REUSE_MS) last = { at: now(), use: read() };
    return last.use;
  };
}
