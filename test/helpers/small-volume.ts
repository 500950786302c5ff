// A small file system of its own for disk-full tests: a tmpfs of a few MiB mounted on a fresh folder (needs root,
// as CI and the dev container run; elsewhere mounting fails with the reason, so the test fails rather than skips).
// `fill()` takes every free byte with a filler file, `free()` removes it, as an operator cleaning the disk.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface SmallVolume {
  dir: string;
  /** Writes a filler file until the volume is full (ENOSPC). */
  fill(): void;
  /** Removes the filler. */
  free(): void;
  /** Free bytes now. */
  freeBytes(): number;
  unmount(): void;
}

/** Null when this process may mount a tmpfs; else the reason it may not. */
export function smallVolumeUnavailable(): string | null {
  if (process.getuid?.() !== 0) return 'mounting a small tmpfs needs root (run the tests as root, as CI does)';
  return null;
}

/** Mounts a tmpfs of `sizeBytes` on `at` (created), or on a fresh folder under `parent`. */
export function mountSmallVolume(sizeBytes: number, where: { parent?: string; at?: string } = {}): SmallVolume {
  const why = smallVolumeUnavailable();
  if (why) throw new Error(`cannot mount a small volume for this test: ${why}`);
  const dir = where.at ?? mkdtempSync(path.join(where.parent ?? process.env.AGL_TEST_SCRATCH ?? os.tmpdir(), 'agl-small-volume-'));
  mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes}`, 'tmpfs', dir]);
  const filler = path.join(dir, 'filler');
  return {
    dir,
    fill() {
      const fd = openSync(filler, 'a');
      const chunk = Buffer.alloc(64 * 1024, 0x78);
      try {
        for (;;) {
          try {
            writeSync(fd, chunk);
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
            // Whatever a smaller write still fits, byte by byte down to nothing.
            for (let n = chunk.length / 2; n >= 1; n = Math.floor(n / 2)) {
              try {
                writeSync(fd, chunk, 0, n);
              } catch {
                /* smaller */
              }
            }
            return;
          }
        }
      } finally {
        closeSync(fd);
      }
    },
    free() {
      rmSync(filler, { force: true });
    },
    freeBytes() {
      const s = statfsSync(dir);
      return s.bavail * s.bsize;
    },
    unmount() {
      try {
        execFileSync('umount', ['-l', dir]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
