// Appends bytes to a file and syncs them to disk before returning, so a step counted as written survives a crash.
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';

export function appendSynced(file: string, bytes: Uint8Array): void {
  const fd = openSync(file, 'a');
  try {
    writeSync(fd, bytes);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
