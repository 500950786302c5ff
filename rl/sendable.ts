// What the trainer can take: every number of a datum goes over the wire as a float32 (the Tinker API's tensors),
// so a float64 advantage beyond ±3.4e38 becomes ±Infinity there and the trainer refuses the whole batch. A reward
// of 1e308 does that: its group's mean is ~2.5e307, its advantage ~7.5e307. These checks are where advantages
// leave rl/: the groups and datums that would not survive the wire are left out, and counted.
import type { Datum } from './types';

/** True when `x` is still a finite number once rounded to float32. */
export function fitsFloat32(x: number): boolean {
  return Number.isFinite(Math.fround(x));
}

/** Indexes of the groups any of whose advantages would not survive float32. */
export function groupsWithUnsendableAdvantages(advantages: readonly (readonly number[])[]): Set<number> {
  const bad = new Set<number>();
  advantages.forEach((group, i) => {
    if (!group.every(fitsFloat32)) bad.add(i);
  });
  return bad;
}

/** True when every loss input of the datum (advantages, logprobs, …) survives float32. */
export function isSendable(d: Datum): boolean {
  return Object.values(d.lossFnInputs).every((xs) => xs === undefined || xs.every(fitsFloat32));
}
