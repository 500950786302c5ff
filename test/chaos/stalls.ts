// The chaos suite's faults that are not kills: a freeze (SIGSTOP of a process and all it started, then SIGCONT: a
// stuck machine, a debugger, a suspended VM; long enough, and the supervisor's liveness check restarts it) and a
// full disk (the store's volume filled to the last byte, then emptied: an operator cleaning up).
import type { Stack } from '../../dev/stack';
import type { SmallVolume } from '../helpers/small-volume';

export const FROZEN = ['store', 'proxy', 'trainer', 'worker', 'runners'] as const;
export type Frozen = (typeof FROZEN)[number];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    /* gone: killed meanwhile (by the supervisor's liveness check, say) */
  }
}

/** Freezes the service's process group for `holdMs`, then lets it go on (if it is still the same process). */
export async function freeze(stack: Stack, target: Frozen, holdMs: number): Promise<void> {
  const proc = stack.services[target].process;
  if (!proc) return;
  signalGroup(proc.pid, 'SIGSTOP');
  await sleep(holdMs);
  signalGroup(proc.pid, 'SIGCONT');
}

/** Fills the store's volume for `holdMs`, then frees it. */
export async function fillDisk(volume: SmallVolume, holdMs: number): Promise<void> {
  volume.fill();
  try {
    await sleep(holdMs);
  } finally {
    volume.free();
  }
}
