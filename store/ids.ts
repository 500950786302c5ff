// Identifier generation in the Python store's format (prefix + hex), §2.6. Nothing validates the format.
import { randomBytes } from 'node:crypto';

// Random bytes drawn 4 KiB at a time: one system call for hundreds of ids instead of one each.
let pool = Buffer.alloc(0);
let used = 0;
function hex(chars: number): string {
  const n = Math.ceil(chars / 2);
  if (used + n > pool.length) {
    pool = randomBytes(4096);
    used = 0;
  }
  used += n;
  return pool.toString('hex', used - n, used).slice(0, chars);
}

export const newRolloutId = (): string => `ro-${hex(12)}`;
export const newAttemptId = (): string => `at-${hex(8)}`;
export const newResourcesId = (): string => `rs-${hex(12)}`;
export const newTraceId = (): string => hex(32);
export const newSpanId = (): string => hex(16);
