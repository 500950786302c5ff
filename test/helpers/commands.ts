// The project's commands run as a user runs them (`npm run client -- ...` is client.ts, `npm start` is dev/main.ts),
// each in its own process; their exit code and output, and a check that a mistake was answered in one line.
import { execFile } from 'node:child_process';
import assert from 'node:assert/strict';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `node --import tsx <script> <args>` in the project folder; never throws for a non-zero exit. */
export function runCommand(script: string, args: string[], env: NodeJS.ProcessEnv = process.env, timeoutMs = 120_000): Promise<CommandResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', script, ...args], { cwd: ROOT, env, timeout: timeoutMs, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

export const client = (args: string[], env?: NodeJS.ProcessEnv) => runCommand('client.ts', args, env);

/** The mistake was answered on stderr with exactly one line matching `pattern`, no stack trace, and exit code `code`. */
export function assertOneLine(r: CommandResult, pattern: RegExp, code = 1): void {
  const lines = r.stderr.trim().split('\n');
  assert.equal(r.code, code, `exit code; stderr:\n${r.stderr}\nstdout:\n${r.stdout}`);
  assert.equal(lines.length, 1, `one line on stderr, got:\n${r.stderr}`);
  assert.match(lines[0]!, pattern);
  assert.doesNotMatch(r.stderr + r.stdout, /\n\s+at .+:\d+:\d+/, 'no stack trace');
}
