// Appends bytes to a file and syncs them to disk before returning, so a step counted as written survives a crash.
// All or nothing: a write that fails part way (the disk filled up) is cut off again, so the file never ends in
// half a record that a later append would glue to the next one.
import { closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, writeSync } from 'node:fs';

export function appendSynced(file: string, bytes: Uint8Array): void {
  const fd = openSync(file, 'a');
  const size = fstatSync(fd).size;
  try {
    // writeSync may write part of the bytes (a disk filling up) without an error; the rest goes in the next call.
    for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done);
    fsyncSync(fd);
  } catch (err) {
    try {
      ftruncateSync(fd, size);
    } catch {
      /* the next append cuts what is left (run-files.ts) */
    }
    throw err;
  } finally {
    closeSync(fd);
  }
}
