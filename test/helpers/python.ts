// Python virtual environments for interop tests with the real Python peers. Each is created once in the user's
// cache (venvRoot(): ~/.cache/agl-temporal/venvs/<name>-<hash of its package list>) and reused by every clone on
// this machine, so a fresh clone (CI's) pays pip only for a package list it has not seen. Files of this repo a venv
// puts on sys.path (extras.paths) are written at each use, so the venv follows the clone that uses it.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { withDirLock } from '../../records/dir-lock';

const run = promisify(execFile);

/** Where the test venvs live: one folder per user, shared by every clone ($XDG_CACHE_HOME or ~/.cache). */
export const venvRoot = (env: NodeJS.ProcessEnv = process.env): string =>
  path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'agl-temporal', 'venvs');

export interface Venv {
  python: string;
  binDir: string;
}

export interface VenvExtras {
  /** Installed after `packages` with --no-deps (tinker-cookbook, whose pinned tml-renderers PyPI does not have). */
  noDeps?: string[];
  /** Directories put on the venv's sys.path by a .pth file (stand-in modules kept in this repo). */
  paths?: string[];
}

/** `interpreter`: the Python that creates the venv (default `python3`), e.g. a pyenv version a package requires. */
export async function ensureVenv(name: string, packages: string[], interpreter = 'python3', extras: VenvExtras = {}): Promise<Venv> {
  const key: unknown[] = interpreter === 'python3' ? [...packages] : [interpreter, ...packages];
  if (extras.noDeps?.length) key.push({ noDeps: extras.noDeps });
  const want = createHash('sha256').update(JSON.stringify(key)).digest('hex');
  const root = venvRoot();
  const dir = path.join(root, `${name}-${want.slice(0, 12)}`);
  const binDir = path.join(dir, 'bin');
  const python = path.join(binDir, 'python');
  const stamp = path.join(dir, '.installed');
  const ready = () => existsSync(stamp) && readFileSync(stamp, 'utf8') === want && existsSync(python);
  // One builder at a time per machine: a second clone's tests wait for the first one's pip instead of racing it.
  if (!ready()) await withDirLock(root, () => (ready() ? undefined : build(name, dir, packages, interpreter, extras, want)));
  if (extras.paths?.length) await linkPaths(python, extras.paths);
  return { python, binDir };
}

async function build(name: string, dir: string, packages: string[], interpreter: string, extras: VenvExtras, want: string): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(path.dirname(dir), { recursive: true });
  const started = Date.now();
  process.stderr.write(`[venv ${name}] creating ${dir} and installing ${packages.join(' ')}\n`);
  const python = path.join(dir, 'bin', 'python');
  await run(interpreter, ['-m', 'venv', dir]);
  await run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...packages], {
    maxBuffer: 64 << 20,
    timeout: 15 * 60_000,
  });
  if (extras.noDeps?.length) {
    await run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-deps', ...extras.noDeps], { maxBuffer: 64 << 20, timeout: 15 * 60_000 });
  }
  writeFileSync(path.join(dir, '.installed'), want);
  process.stderr.write(`[venv ${name}] ready in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}

/** Puts this clone's directories on the venv's sys.path (a .pth file), rewritten only when it names others. */
async function linkPaths(python: string, paths: string[]): Promise<void> {
  const { stdout } = await run(python, ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])']);
  const pth = path.join(stdout.trim(), 'agl-temporal-paths.pth');
  const text = paths.join('\n') + '\n';
  if (!existsSync(pth) || readFileSync(pth, 'utf8') !== text) writeFileSync(pth, text);
}
