// A process on one of the test's hosts: `ip netns exec <ns> <command>`, in a process group of its own, its output
// kept in a log file (shown when the test fails), ready once a line matches.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';

export class HostProcess {
  private proc: ChildProcess | null = null;
  exited: Promise<number | null> = Promise.resolve(null);
  private tail: string[] = [];

  constructor(readonly name: string, readonly ns: string, readonly command: string[], readonly env: NodeJS.ProcessEnv, readonly logFile: string) {}

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  /** Starts it and waits for a line matching `ready` (stdout or stderr). */
  start(ready: RegExp, timeoutMs = 180_000): Promise<void> {
    const log = createWriteStream(this.logFile, { flags: 'a' });
    const proc = spawn('ip', ['netns', 'exec', this.ns, ...this.command], { env: this.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = proc;
    this.exited = new Promise((r) => proc.once('exit', (code) => r(code)));
    return new Promise((resolve, reject) => {
      let buf = '';
      const timer = setTimeout(() => reject(new Error(`${this.name}: not ready after ${timeoutMs} ms; last lines:\n${this.tail.join('\n')}`)), timeoutMs);
      const onData = (chunk: Buffer) => {
        log.write(chunk);
        buf += chunk.toString();
        const lines = buf.split('\n');
        buf = lines.pop()!;
        for (const l of lines) {
          this.tail = [...this.tail.slice(-30), l];
          if (ready.test(l)) {
            clearTimeout(timer);
            resolve();
          }
        }
      };
      proc.stdout!.on('data', onData);
      proc.stderr!.on('data', onData);
      void this.exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`${this.name} exited (${code}) before it was ready; last lines:\n${this.tail.join('\n')}`));
      });
    });
  }

  /** kill -9 of its process group. */
  async kill(): Promise<void> {
    if (!this.proc?.pid || this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    try {
      process.kill(-this.proc.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
    await this.exited;
  }

  /** SIGTERM, then -9 after a grace period. */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.proc?.pid || this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    try {
      process.kill(-this.proc.pid, 'SIGTERM');
    } catch {
      return;
    }
    const t = setTimeout(() => void this.kill(), graceMs);
    await this.exited;
    clearTimeout(t);
  }
}
