// Is a supervised process still alive, not merely running? A process that hangs or is frozen (SIGSTOP, a stuck
// machine) never exits, so a supervisor that only restarts what exits waits on it for ever. A service with an
// HTTP address is asked every few seconds (any answer counts: the kernel accepts connections for a frozen process,
// only an answer proves it serves); a process without one (the worker, the runners) counts as dead while it is
// stopped. After `deadMs` without a sign of life the supervisor kills it and starts it again.
import { request } from 'node:http';
import { readFileSync } from 'node:fs';

export interface LivenessOptions {
  /** The service's address, when it has one (its ready line's URL). */
  url?: string;
  intervalMs: number;
  /** How long without a sign of life counts as dead. */
  deadMs: number;
}

/** The defaults: asked every 2 s, dead after AGL_LIVENESS_DEAD_S (default 30) seconds without an answer. */
export function defaultLiveness(url: string | undefined): LivenessOptions {
  const deadS = Number(process.env.AGL_LIVENESS_DEAD_S ?? 30);
  return { url, intervalMs: 2_000, deadMs: (Number.isFinite(deadS) && deadS > 0 ? deadS : 30) * 1000 };
}

function answers(url: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    // A fresh connection each time (no keep-alive pool): an old one may be stuck with the process.
    const req = request(url, { method: 'GET', agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

/** True unless /proc says the process is stopped (T) or traced (t); elsewhere than Linux, true. */
function notStopped(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'T' && state !== 't';
  } catch {
    return true;
  }
}

/** Watches `pid`; calls `onDead` once with the reason when it shows no life for `deadMs`. Returns a stop function. */
export function watchLiveness(pid: number, o: LivenessOptions, onDead: (why: string) => void): () => void {
  let lastAlive = Date.now();
  let stopped = false;
  let probing = false;
  const timer = setInterval(async () => {
    if (stopped || probing) return;
    probing = true;
    const alive = o.url ? await answers(o.url, Math.min(5_000, o.deadMs)) : notStopped(pid);
    probing = false;
    if (stopped) return;
    if (alive) lastAlive = Date.now();
    else if (Date.now() - lastAlive > o.deadMs) {
      stop();
      const s = ((Date.now() - lastAlive) / 1000).toFixed(0);
      onDead(o.url ? `has not answered on ${o.url} for ${s} s` : `has been stopped (frozen) for ${s} s`);
    }
  }, o.intervalMs);
  timer.unref();
  const stop = () => {
    stopped = true;
    clearInterval(timer);
  };
  return stop;
}
