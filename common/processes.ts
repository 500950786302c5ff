// Starting and stopping child processes so that none outlives its parent: every process started here is
// registered and killed (with its whole process group) when the parent exits, whichever way it exits.
import { spawn, type ChildProcess } from 'node:child_process';

export interface StartOptions {
  name: string;
  command: string;
  args: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Resolve once a line of stdout or stderr matches; otherwise resolve once spawned. */
  readyLine?: RegExp;
  readyTimeoutMs?: number;
  /** Echo the child's output to ours, prefixed with its name. */
  echo?: boolean;
}

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** The match of `readyLine`, when one was given. */
  readonly match?: RegExpMatchArray;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  /** Everything the process printed so far (the last 1 MiB). */
  output(): string;
  /** SIGTERM to the process group, SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL to the process group at once, as a crash would. */
  kill9(): void;
}

const live = new Set<ManagedProcess>();
const MAX_OUTPUT = 1 << 20;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
}

let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const p of live) killGroup(p.pid, 'SIGKILL');
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      for (const p of live) killGroup(p.pid, 'SIGKILL');
      process.exit(128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 1));
    });
  }
}

export async function startProcess(opts: StartOptions): Promise<ManagedProcess> {
  installExitHook();
  const child = spawn(opts.command, opts.args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // own process group, so stop() reaches grandchildren too
  });
  if (child.pid === undefined) {
    const err = await new Promise<Error>((resolve) => child.once('error', resolve));
    throw new Error(`${opts.name}: could not start ${opts.command}: ${err.message}`);
  }
  const pid = child.pid;
  let buffer = '';
  let pendingLine = '';
  const lineListeners: ((line: string) => void)[] = [];
  const onData = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    buffer = (buffer + text).slice(-MAX_OUTPUT);
    if (opts.echo) {
      for (const line of text.split('\n')) if (line) process.stdout.write(`[${opts.name}] ${line}\n`);
    }
    pendingLine += text;
    const lines = pendingLine.split('\n');
    pendingLine = lines.pop() ?? '';
    for (const line of lines) for (const l of lineListeners) l(line);
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  let match: RegExpMatchArray | undefined;
  if (opts.readyLine) {
    const pattern = opts.readyLine;
    const timeoutMs = opts.readyTimeoutMs ?? 60_000;
    match = await new Promise<RegExpMatchArray>((resolve, reject) => {
      const timer = setTimeout(() => {
        killGroup(pid, 'SIGKILL');
        reject(new Error(`${opts.name} printed no line matching ${pattern} within ${timeoutMs} ms; output:\n${buffer.slice(-4000)}`));
      }, timeoutMs);
      lineListeners.push((line) => {
        const m = line.match(pattern);
        if (m) {
          clearTimeout(timer);
          resolve(m);
        }
      });
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`${opts.name} exited (code ${code}) before it was ready; output:\n${buffer.slice(-4000)}`));
      });
    });
  }

  const managed: ManagedProcess = {
    name: opts.name,
    pid,
    child,
    match,
    exited,
    output: () => buffer,
    async stop(graceMs = 5000) {
      if (child.exitCode !== null || child.signalCode !== null) {
        live.delete(managed);
        return;
      }
      killGroup(pid, 'SIGTERM');
      const timer = setTimeout(() => killGroup(pid, 'SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
      live.delete(managed);
    },
    kill9() {
      killGroup(pid, 'SIGKILL');
    },
  };
  live.add(managed);
  void exited.then(() => live.delete(managed));
  return managed;
}

/** Stops every process started by this module that is still running. */
export async function stopAllProcesses(): Promise<void> {
  await Promise.all([...live].map((p) => p.stop()));
}

/** Whether a process with this pid is alive (EPERM: it is, under another user). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
