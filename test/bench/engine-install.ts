// `npm run bench -- engine-install`: SkyRL's first install as a fresh machine sees it: an empty cache (uv, pip and
// the project's own under a new XDG_CACHE_HOME and UV_CACHE_DIR) and a new data directory; then the same again from
// the warm cache into another data directory (what a second clone, or CI's next run, pays). Times each step:
// uv's pip install, the uv sync of the pinned SkyRL project, making the tiny Qwen3. Removes its folders after.
//   npm run bench -- engine-install [--keep]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { ensureTinyQwen3, provisionSkyrl } from '../../engines/skyrl/provision';

const KEEP = process.argv.includes('--keep');
const t0 = Date.now();
const log = (line: string) => process.stderr.write(`[bench ${((Date.now() - t0) / 1000).toFixed(1)}s] ${line}\n`);

async function once(label: string, dataDir: string): Promise<{ provision: number; model: number }> {
  const p0 = Date.now();
  const project = await provisionSkyrl({ dataDir, log: (l) => log(`${label}: ${l}`), backend: 'jax' });
  const provision = (Date.now() - p0) / 1000;
  const m0 = Date.now();
  await ensureTinyQwen3({ python: project.python, dataDir, log: (l) => log(`${label}: ${l}`) });
  return { provision, model: (Date.now() - m0) / 1000 };
}

async function main(): Promise<void> {
  const root = mkdtempSync(path.join(tmpdir(), 'agl-engine-install-'));
  // A fresh machine: nothing cached by pip, uv or this project (provision.ts reads XDG_CACHE_HOME).
  process.env.XDG_CACHE_HOME = path.join(root, 'cache');
  process.env.UV_CACHE_DIR = path.join(root, 'cache', 'uv');
  delete process.env.PIP_CACHE_DIR;
  try {
    const cold = await once('cold', path.join(root, 'data-1'));
    const warm = await once('warm', path.join(root, 'data-2'));
    const size = (p: string) => execFileSync('du', ['-sh', p], { encoding: 'utf8' }).split('\t')[0];
    const lines = [
      '| install | uv + uv sync of skyrl[tinker,jax]==0.4.0 | the tiny Qwen3 |',
      '|---|---:|---:|',
      `| fresh machine (empty caches, new data dir) | ${cold.provision.toFixed(1)} s | ${cold.model.toFixed(1)} s |`,
      `| warm cache (new data dir) | ${warm.provision.toFixed(1)} s | ${warm.model.toFixed(1)} s |`,
      '',
      `uv's cache after: ${size(process.env.UV_CACHE_DIR)}; one data dir's environment: ${size(path.join(root, 'data-1', 'engines'))}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    if (!KEEP) rmSync(root, { recursive: true, force: true });
  }
}

main().catch((err: Error) => {
  process.stderr.write(`bench engine-install: ${err.message}\n`);
  process.exit(1);
});
