// The trainer's disk use, for its health route: bytes under its data directory (states, samplers, checkpoint
// records) and the room left on that volume. Walking the directory costs a little per file, so an answer is
// reused for a while: runs read it once a step.
import { readdirSync, statfsSync, lstatSync } from 'node:fs';
import path from 'node:path';

export interface TrainerDiskUse {
  data_bytes: number;
  volume_free_bytes: number;
}

const REUSE_MS = 10_000;

function bytesUnder(p: string): number {
  let st;
  try {
    st = lstatSync(p);
  } catch {
    return 0; // removed while we walked (an expired state being swept)
  }
  if (!st.isDirectory()) return st.size;
  let total = 0;
  let names: string[] = [];
  try {
    names = readdirSync(p);
  } catch {
    return 0;
  }
  for (const name of names) total += bytesUnder(path.join(p, name));
  return total;
}

export function diskUseReader(dataDir: string, now: () => number = Date.now): () => TrainerDiskUse {
  let last: { at: number; use: TrainerDiskUse } | undefined;
  return () => {
    if (last && now() - last.at < REUSE_MS) return last.use;
    const fs = statfsSync(dataDir);
    const use = { data_bytes: bytesUnder(dataDir), volume_free_bytes: Number(fs.bavail) * Number(fs.bsize) };
    last = { at: now(), use };
    return use;
  };
}
