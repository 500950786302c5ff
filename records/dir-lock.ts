// The run directory's write lock, held for as long as its holder lives: a lock directory with the holder's host
// and pid in it. A process on the same host takes it over only once that pid is gone, never because the holder
// was slow (a lock that expires after a few seconds without a refresh is lost by a holder whose event loop is
// busy). Two processes in one worker wait in line in memory. A holder on another host (a directory on shared
// storage, which runs no longer need) cannot be checked: its lock is taken over after a minute without a refresh.
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pidAlive } from '../common/processes';

const REFRESH_MS = 1_000;
/** A lock without an owner file (its maker died between two system calls, or an older version made it). */
const ORPHAN_STALE_MS = 5_000;
const OTHER_HOST_STALE_MS = 60_000;
const GIVE_UP_MS = 120_000;

interface Owner {
  host: string;
  pid: number;
}

const inProcess = new Map<string, Promise<unknown>>();

function readOwner(lock: string): Owner | null {
  try {
    const o = JSON.parse(readFileSync(path.join(lock, 'owner'), 'utf8')) as Owner;
    return typeof o.pid === 'number' && typeof o.host === 'string' ? o : null;
  } catch {
    return null;
  }
}

/** Why the lock can be taken over, or null while its holder may be alive. */
function staleReason(lock: string): string | null {
  let age: number;
  try {
    age = Date.now() - statSync(lock).mtimeMs;
  } catch {
    return null; // released meanwhile
  }
  const owner = readOwner(lock);
  if (!owner) return age > ORPHAN_STALE_MS ? `no owner, untouched for ${Math.round(age)} ms` : null;
  if (owner.host === os.hostname()) return owner.pid !== process.pid && !pidAlive(owner.pid) ? `its holder, pid ${owner.pid}, is gone` : null;
  return age > OTHER_HOST_STALE_MS ? `held from ${owner.host} and untouched for ${Math.round(age / 1000)} s` : null;
}

async function acquire(lock: string): Promise<() => void> {
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      mkdirSync(lock);
      writeFileSync(path.join(lock, 'owner'), JSON.stringify({ host: os.hostname(), pid: process.pid }));
      const timer = setInterval(() => {
        const now = new Date();
        try {
          utimesSync(lock, now, now);
        } catch {
          /* released */
        }
      }, REFRESH_MS);
      timer.unref();
      return () => {
        clearInterval(timer);
        rmSync(lock, { recursive: true, force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const stale = staleReason(lock);
    if (stale) {
      // Moved aside in one step, so of two processes taking over at once only one removes the dead lock.
      const aside = `${lock}.stale-${process.pid}-${attempt}`;
      try {
        renameSync(lock, aside);
        rmSync(aside, { recursive: true, force: true });
        console.warn(`run directory lock ${lock} taken over: ${stale}`);
      } catch {
        /* someone else took it over first */
      }
      continue;
    }
    if (Date.now() - started > GIVE_UP_MS) {
      const o = readOwner(lock);
      throw new Error(`run directory lock ${lock}: still held after ${GIVE_UP_MS / 1000} s by ${o ? `pid ${o.pid} on ${o.host}` : 'an unknown process'}`);
    }
    await sleep(Math.min(500, 20 * 1.5 ** Math.min(attempt, 10)));
  }
}

/** Runs `fn` holding the lock `<dir>/.write.lock`. */
export async function withDirLock<T>(dir: string, fn: () => T | Promise<T>): Promise<T> {
  mkdirSync(dir, { recursive: true });
  const lock = path.join(dir, '.write.lock');
  const before = inProcess.get(lock) ?? Promise.resolve();
  const turn = before.catch(() => undefined).then(async () => {
    const release = await acquire(lock);
    try {
      return await fn();
    } finally {
      release();
    }
  });
  inProcess.set(lock, turn);
  try {
    return await turn;
  } finally {
    if (inProcess.get(lock) === turn) inProcess.delete(lock);
  }
}
