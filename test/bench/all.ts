// `npm run bench` with no name: every comparison, one after the other on this machine, then docs/benchmarks.md
// (report.ts) with the figures of this one run and the command that made them. Each bench runs as its own process
// and hands its figures over through `--json FILE`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { loadAverage, ROOT } from './bench-kit';
import { renderReport, type BenchRun } from './report';

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
  // The longest (about 2 h on a quiet 2-core machine): writes docs/async-bench.md itself.
  { id: 'async', bench: 'async', args: [] },
];

function main(): void {
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-bench-all-'));
  const started = new Date();
  const loadBefore = loadAverage();
  const runs: BenchRun[] = [];
  for (const step of PLAN) {
    const file = path.join(dir, `${step.id}.json`);
    const command = `npm run bench -- ${[step.bench, ...step.args].join(' ')}`;
    process.stdout.write(`\n=== ${command}\n`);
    const t0 = Date.now();
    const res = spawnSync(process.execPath, ['--import', 'tsx', path.join(__dirname, `${step.bench}.ts`), ...step.args, '--json', file], { cwd: ROOT, stdio: 'inherit' });
    let result: unknown = null;
    try {
      result = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      /* the bench failed before writing its figures */
    }
    runs.push({ id: step.id, command, seconds: (Date.now() - t0) / 1000, exitCode: res.status, result });
  }
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
  const machine = `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}), node ${process.version}; load average ${loadBefore} at the start, ${loadAverage()} at the end`;
  const out = path.join(ROOT, 'docs', 'benchmarks.md');
  writeFileSync(out, renderReport({ runs, started, commit, machine }));
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`\nwrote ${path.relative(ROOT, out)}\n`);
  if (runs.some((r) => r.exitCode !== 0)) process.exitCode = 1;
}

main();
