// `npm run bench` with no name: every comparison, one after the other on this machine, then docs/benchmarks.md
// (report.ts) with the figures of this one run and the command that made them. Each bench runs as its own process
// and hands its figures over through `--json FILE`; the async bench also rewrites docs/async-bench.md, the figure
// README quotes. Each bench's section names the commit it ran at and the machine's load while it ran (/proc/loadavg
// sampled every 5 s), printed as it ends too, so a figure measured on a loaded machine shows it.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { loadAverage, ROOT } from './bench-kit';
import { renderReport, type BenchRun, type LoadDuring } from './report';

/** The benches and their arguments, in the order they run. */
export const PLAN: { id: string; bench: string; args: string[] }[] = [
  { id: 'store-load', bench: 'store-load', args: ['--rollouts', '2000', '--runners', '32'] },
  { id: 'store-load-large', bench: 'store-load', args: ['--rollouts', '4000', '--runners', '64'] },
  { id: 'agl-harness', bench: 'agl-harness', args: ['--tasks', '1024', '--runners', '32'] },
  { id: 'proxy-litellm', bench: 'proxy-litellm', args: [] },
  { id: 'proxy-scoped', bench: 'proxy-scoped', args: [] },
  { id: 'history-growth', bench: 'history-growth', args: [] },
  { id: 'orchestration', bench: 'orchestration', args: [] },
  { id: 'first-start', bench: 'first-start', args: ['--full'] },
  // The longest: README's async figure (the run config's async defaults, three run seeds, 2 s and 300 ms medians;
  // about 50 min on 2 cores); writes docs/async-bench.md itself.
  { id: 'async', bench: 'async', args: ['--medians', '2000,300', '--losses', 'ppo', '--rules', 'pace', '--seeds', '1,2,3'] },
];

/** HEAD's short hash, with a note when the tree has uncommitted changes. */
function treeState(): string {
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim() ? ' with uncommitted changes' : '';
  return commit + dirty;
}

/** The 1-minute load average every `everyMs` until stopped: what the machine was doing while a bench ran. */
function sampleLoad(everyMs = 5000): () => LoadDuring {
  const first = loadAverage();
  const ones: number[] = [];
  const take = () => ones.push(Number(loadAverage().split(' ')[0]));
  take();
  const timer = setInterval(take, everyMs);
  return () => {
    clearInterval(timer);
    take();
    return { start: first, end: loadAverage(), max: Math.max(...ones), mean: ones.reduce((a, b) => a + b, 0) / ones.length, samples: ones.length };
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-bench-all-'));
  const started = new Date();
  const loadBefore = loadAverage();
  const runs: BenchRun[] = [];
  // AGL_BENCH_ONLY=id,id runs those steps alone (a check of this file; AGL_BENCH_OUT then keeps docs/ as it is).
  const only = process.env.AGL_BENCH_ONLY?.split(',').filter(Boolean);
  for (const step of PLAN.filter((s) => !only || only.includes(s.id))) {
    const file = path.join(dir, `${step.id}.json`);
    const command = `npm run bench -- ${[step.bench, ...step.args].join(' ')}`;
    process.stdout.write(`\n=== ${command}\n`);
    const t0 = Date.now();
    const commit = treeState();
    const stopLoad = sampleLoad();
    // Asynchronous, so that the load sampler's timer runs while the bench does.
    const res = await new Promise<{ status: number | null }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, `${step.bench}.ts`), ...step.args, '--json', file], { cwd: ROOT, stdio: 'inherit' });
      child.on('close', (status) => resolve({ status }));
      child.on('error', () => resolve({ status: null }));
    });
    const load = stopLoad();
    process.stdout.write(`=== ${step.id}: exit ${res.status}, ${((Date.now() - t0) / 1000).toFixed(0)} s at ${commit}; load (1 min) ${load.start.split(' ')[0]} at the start, max ${load.max.toFixed(2)}, mean ${load.mean.toFixed(2)}, ${load.end.split(' ')[0]} at the end\n`);
    let result: unknown = null;
    try {
      result = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      /* the bench failed before writing its figures */
    }
    runs.push({ id: step.id, command, seconds: (Date.now() - t0) / 1000, exitCode: res.status, result, commit, load });
  }
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
  const machine = `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}), node ${process.version}; load average ${loadBefore} at the start, ${loadAverage()} at the end`;
  const out = process.env.AGL_BENCH_OUT ? path.resolve(process.env.AGL_BENCH_OUT) : path.join(ROOT, 'docs', 'benchmarks.md');
  writeFileSync(out, renderReport({ runs, started, commit, machine }));
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`\nwrote ${path.relative(ROOT, out)}\n`);
  if (runs.some((r) => r.exitCode !== 0)) process.exitCode = 1;
}

void main();
