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

export interface VenvExtras {
  /** Installed after `packages` with --no-deps (tinker-cookbook, whose pinned tml-renderers PyPI does not have). */
  noDeps?: string[];
  /** Directories put on the venv's sys.path by a .pth file (stand-in modules kept in this repo). */
  paths?: string[];
}

/** `interpreter`: the Python that creates the venv (default `python3`), e.g. a pyenv version a package requires. */
export async function ensureVenv(name: string, packages: string[], interpreter = 'python3', extras: VenvExtras = {}): Promise<Venv> {
  const dir = path.join(ROOT, '.data', 'venvs', name);
  const binDir = path.join(dir, 'bin');
  const python = path.join(binDir, 'python');
  const stamp = path.join(dir, '.installed');
  const key: unknown[] = interpreter === 'python3' ? [...packages] : [interpreter, ...packages];
  if (extras.noDeps?.length || extras.paths?.length) key.push(extras);
  const want = createHash('sha256').update(JSON.stringify(key)).digest('hex');
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
  if (extras.noDeps?.length) {
    await run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-deps', ...extras.noDeps], { maxBuffer: 64 << 20, timeout: 15 * 60_000 });
  }
  if (extras.paths?.length) {
    const { stdout } = await run(python, ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])']);
    writeFileSync(path.join(stdout.trim(), 'agl-temporal-paths.pth'), extras.paths.join('\n') + '\n');
  }
  writeFileSync(stamp, want);
  process.stderr.write(`[venv ${name}] ready in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  return { python, binDir };
}
