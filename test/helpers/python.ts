// Python virtual environments for interop tests with the real Python peers. Each is created once under
// .data/venvs/<name> and reused while its package list is unchanged.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');

export interface Venv {
  python: string;
  binDir: string;
}

/** `interpreter`: the Python that creates the venv (default `python3`), e.g. a pyenv version a package requires. */
export async function ensureVenv(name: string, packages: string[], interpreter = 'python3'): Promise<Venv> {
  const dir = path.join(ROOT, '.data', 'venvs', name);
  const binDir = path.join(dir, 'bin');
  const python = path.join(binDir, 'python');
  const stamp = path.join(dir, '.installed');
  const want = createHash('sha256').update(JSON.stringify(interpreter === 'python3' ? packages : [interpreter, ...packages])).digest('hex');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === want && existsSync(python)) return { python, binDir };

  rmSync(dir, { recursive: true, force: true });
  mkdirSync(path.dirname(dir), { recursive: true });
  const started = Date.now();
  process.stderr.write(`[venv ${name}] creating and installing ${packages.join(' ')}\n`);
  await run(interpreter, ['-m', 'venv', dir]);
  await run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...packages], {
    maxBuffer: 64 << 20,
    timeout: 15 * 60_000,
  });
  writeFileSync(stamp, want);
  process.stderr.write(`[venv ${name}] ready in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  return { python, binDir };
}
