// Runs one provisioning step (pip, uv sync, a Python script) as a child process, saying every ~10 s that it is still
// going and what it printed last, so a first install of several GB never looks hung. Its result carries the last
// line it printed on stderr, which is what a one-line error about the step should quote.
import { spawn } from 'node:child_process';

export interface LoggedRun {
  code: number | null;
  /** The last non-empty line on stderr (else on stdout): the reason, when the step failed. */
  lastLine: string;
  stdout: string;
  /** The last 64 KiB of stderr. */
  stderr: string;
}

export interface LoggedRunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** What the progress lines call the step, e.g. "skyrl: uv sync". */
  label: string;
  log: (line: string) => void;
  everyMs?: number;
  timeoutMs?: number;
}

const lastNonEmpty = (text: string) =>
  text
    .split(/\r?\n|\r/)
    .map((l) => l.trim())
    .filter(Boolean)
    .pop() ?? '';

export function runLogged(command: string, args: string[], o: LoggedRunOptions): Promise<LoggedRun> {
  return new Promise((resolve) => {
    const started = Date.now();
    let stdout = '';
    let stderr = '';
    const child = spawn(command, args, { cwd: o.cwd, env: o.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (c: Buffer) => (stdout = (stdout + c.toString('utf8')).slice(-65_536)));
    child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-65_536)));
    const last = () => lastNonEmpty(stderr) || lastNonEmpty(stdout);
    const progress = setInterval(() => {
      const s = ((Date.now() - started) / 1000).toFixed(0);
      o.log(`${o.label}: still running after ${s} s${last() ? ` (${last().slice(0, 160)})` : ''}`);
    }, o.everyMs ?? 10_000);
    const timer = o.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), o.timeoutMs) : undefined;
    const done = (code: number | null, extra = '') => {
      clearInterval(progress);
      if (timer) clearTimeout(timer);
      resolve({ code, lastLine: extra || last(), stdout, stderr });
    };
    child.once('error', (err) => done(null, `could not start ${command}: ${err.message}`));
    child.once('close', (code, signal) => done(code, signal === 'SIGKILL' && o.timeoutMs ? `killed after ${o.timeoutMs / 1000} s` : ''));
  });
}
