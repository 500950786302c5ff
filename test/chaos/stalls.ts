// The chaos suite's faults that are not kills: a freeze (SIGSTOP of a process and all it started, then SIGCONT: a
// stuck machine, a debugger, a suspended VM; long enough, and the supervisor's liveness check restarts it) and a
// full disk (the store's volume filled to the last byte, then emptied: an operator cleaning up).
import { existsSync, readFileSync } from 'node:fs';
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

/** Whether `pid` is a live process (not gone, not a zombie), as /proc says; elsewhere than Linux, as kill(0) says. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || existsSync('/proc/self/stat')) return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}

/** What a freeze did: the process it stopped, and whether that process was gone (killed) when the hold ended. */
export interface FreezeOutcome {
  target: Frozen;
  pid: number;
  /** How long it was held stopped, in ms (the hold, plus the grace waited for a kill). */
  heldMs: number;
  killed: boolean;
}

/**
 * Freezes the service's process group for `holdMs`, then lets it go on (if it is still the same process). With
 * `graceMs`, a process still there at the end of the hold is held up to that much longer while it is waited for
 * to be killed (a freeze meant to outlast the liveness limit).
 */
export async function freeze(stack: Stack, target: Frozen, holdMs: number, graceMs = 0): Promise<FreezeOutcome | undefined> {
  // A service just killed by another fault is frozen once it is back: its old process is already gone.
  await stack.services[target].whenUp();
  const proc = stack.services[target].process;
  if (!proc || !alive(proc.pid)) return undefined;
  const pid = proc.pid;
  const t0 = Date.now();
  signalGroup(pid, 'SIGSTOP');
  await sleep(holdMs);
  for (const end = Date.now() + graceMs; alive(pid) && Date.now() < end; ) await sleep(100);
  const killed = !alive(pid);
  signalGroup(pid, 'SIGCONT');
  return { target, pid, heldMs: Date.now() - t0, killed };
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
