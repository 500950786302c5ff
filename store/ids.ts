// Identifier generation in the Python store's format (prefix + hex), §2.6. Nothing validates the format.
import { randomBytes } from 'node:crypto';

const hex = (chars: number): string => randomBytes(Math.ceil(chars / 2)).toString('hex').slice(0, chars);

export const newRolloutId = (): string => `ro-${hex(12)}`;
export const newAttemptId = (): string => `at-${hex(8)}`;
export const newResourcesId = (): string => `rs-${hex(12)}`;
export const newTraceId = (): string => hex(32);
export const newSpanId = (): string => hex(16);
