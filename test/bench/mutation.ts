// `npm run bench -- mutation [--only rl|scheduler]`: StrykerJS mutates the RL math (rl/) and the async scheduler
// (workflows/async-scheduler.ts) and runs each one's own tests against every mutant; a mutant no test notices is
// a change in behaviour the tests cannot see. Prints each target's mutation score and writes
// docs/mutation-score.md. Stryker's command runner (node's test runner has no Stryker plugin) runs the target's
// tests once per mutant, so a full run takes a while (tens of minutes on 2 cores): a bench, not part of npm test.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT, stringFlag, writeResult } from './bench-kit';

interface Target {
  name: string;
  mutate: string[];
  tests: string;
}

const TARGETS: Target[] = [
  { name: 'rl', mutate: ['rl/**/*.ts', '!rl/index.ts', '!rl/types.ts'], tests: 'test/rl/*.test.ts' },
  { name: 'scheduler', mutate: ['workflows/async-scheduler.ts'], tests: 'test/workflows/async-scheduler.test.ts' },
];

interface Score {
  target: string;
  killed: number;
  survived: number;
  timeout: number;
  noCoverage: number;
  errors: number;
  score: number;
  minutes: number;
}

/** Counts a Stryker JSON report's mutants by status (the report's own schema: files -> mutants -> status). */
function scoreOf(target: string, report: { files: Record<string, { mutants: Array<{ status: string }> }> }, minutes: number): Score {
  const count = (s: string) => Object.values(report.files).flatMap((f) => f.mutants).filter((m) => m.status === s).length;
  const killed = count('Killed');
  const timeout = count('Timeout');
  const survived = count('Survived');
  const noCoverage = count('NoCoverage');
  const errors = count('RuntimeError') + count('CompileError');
  // Stryker's own definition: detected (killed + timeout) over valid mutants (detected + undetected).
  const score = (100 * (killed + timeout)) / Math.max(1, killed + timeout + survived + noCoverage);
  return { target, killed, survived, timeout, noCoverage, errors, score, minutes };
}

function run(target: Target): Score {
  const work = mkdtempSync(path.join(tmpdir(), `agl-mutation-${target.name}-`));
  const reportFile = path.join(work, 'report.json');
  const config = {
    packageManager: 'npm',
    testRunner: 'command',
    commandRunner: { command: `node --import tsx --test ${target.tests}` },
    mutate: target.mutate,
    // The sandbox needs only the code the tests import; node_modules is linked, not copied.
    ignorePatterns: ['.temporal', '.data', '.venv', 'packages/agents/dist', 'docs', 'runs', '.stryker-tmp', 'agents/python', 'test/bench', 'test/chaos', 'test/interop'],
    reporters: ['clear-text', 'json'],
    jsonReporter: { fileName: reportFile },
    concurrency: 1,
    timeoutMS: 60_000,
    tempDirName: path.join(work, 'sandbox'),
    cleanTempDir: true,
  };
  const configFile = path.join(work, 'stryker.config.json');
  writeFileSync(configFile, JSON.stringify(config, null, 1));
  const started = Date.now();
  const res = spawnSync(path.join(ROOT, 'node_modules', '.bin', 'stryker'), ['run', configFile], { cwd: ROOT, stdio: 'inherit' });
  if (res.status !== 0) throw new Error(`stryker failed on ${target.name} (exit ${res.status})`);
  const score = scoreOf(target.name, JSON.parse(readFileSync(reportFile, 'utf8')), (Date.now() - started) / 60_000);
  rmSync(work, { recursive: true, force: true });
  return score;
}

function main(): void {
  const args = process.argv.slice(2);
  const only = stringFlag(args, 'only');
  const scores = TARGETS.filter((t) => !only || t.name === only).map(run);
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
  const lines = [
    '# Mutation score',
    '',
    `Written by \`npm run bench -- mutation\` at commit ${commit}. StrykerJS ${stryker()} mutates each target and runs its`,
    'own tests against every mutant; a survived mutant is a change of behaviour no test noticed.',
    '',
    '| target | mutants killed | timed out | survived | no coverage | errors | score | minutes |',
    '|---|---|---|---|---|---|---|---|',
    ...scores.map((s) => `| ${s.target} | ${s.killed} | ${s.timeout} | ${s.survived} | ${s.noCoverage} | ${s.errors} | ${s.score.toFixed(1)}% | ${s.minutes.toFixed(1)} |`),
    '',
  ];
  if (!only) writeFileSync(path.join(ROOT, 'docs', 'mutation-score.md'), lines.join('\n'));
  for (const s of scores) process.stdout.write(`mutation score ${s.target}: ${s.score.toFixed(1)}%\n`);
  writeResult(args, scores);
}

function stryker(): string {
  return JSON.parse(readFileSync(path.join(ROOT, 'node_modules', '@stryker-mutator', 'core', 'package.json'), 'utf8')).version;
}

main();
