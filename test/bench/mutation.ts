// `npm run bench -- mutation [--only rl|rl-adapters|scheduler] [--rewrite]`: StrykerJS mutates the RL math (rl/),
// the span → triplet adapters (rl/adapters/) and the async scheduler (workflows/async-scheduler.ts) and runs each
// one's own tests against every mutant; a mutant no test notices is a change in behaviour the tests cannot see.
// Prints each target's score and rewrites that target's section of docs/mutation-score.md (the others are kept;
// --rewrite renders the doc again from the last runs' reports in .data/mutation/). Stryker's command runner (node's
// test runner has no Stryker plugin) runs the target's tests once per mutant, so a run takes tens of minutes on 2
// cores: a bench, not part of npm test.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT, stringFlag, writeResult } from './bench-kit';

interface Target {
  name: string;
  mutate: string[];
  /** Folders whose *.test.ts files are the target's own tests. */
  testDirs: string[];
}

const TARGETS: Target[] = [
  { name: 'rl', mutate: ['rl/**/*.ts', '!rl/index.ts', '!rl/types.ts', '!rl/adapters/**'], testDirs: ['test/rl', 'test/rl/adapters'] },
  { name: 'rl-adapters', mutate: ['rl/adapters/**/*.ts', '!rl/adapters/index.ts', '!rl/adapters/types.ts'], testDirs: ['test/rl', 'test/rl/adapters'] },
  { name: 'scheduler', mutate: ['workflows/async-scheduler.ts'], testDirs: ['test/workflows/async-scheduler.test.ts'] },
];

const DOC = path.join(ROOT, 'docs', 'mutation-score.md');

/** The test files of a target, named one by one (the command runner's shell has no `**`). */
function testFiles(target: Target): string[] {
  return target.testDirs.flatMap((d) =>
    d.endsWith('.test.ts') ? [d] : readdirSync(path.join(ROOT, d)).filter((f) => f.endsWith('.test.ts')).sort().map((f) => `${d}/${f}`));
}

/**
 * One node process loads every test file (node:test runs them in that process and exits 1 on a failure):
 * `node --test` would start a process and load tsx once per file, about ten times slower per mutant.
 */
function testCommand(files: string[]): string {
  return `node --import tsx --eval "for (const f of process.argv.slice(1)) require(require('path').resolve(f))" ${files.join(' ')}`;
}

interface Mutant {
  status: string;
  mutatorName: string;
  replacement?: string;
  location: { start: { line: number; column: number } };
}

interface Report {
  files: Record<string, { mutants: Mutant[] }>;
}

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
function scoreOf(target: string, report: Report, minutes: number): Score {
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

function run(target: Target): { score: Score; report: Report } {
  const work = mkdtempSync(path.join(tmpdir(), `agl-mutation-${target.name}-`));
  const reportFile = path.join(work, 'report.json');
  const config = {
    packageManager: 'npm',
    testRunner: 'command',
    commandRunner: { command: testCommand(testFiles(target)) },
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
  const report = JSON.parse(readFileSync(reportFile, 'utf8')) as Report;
  const score = scoreOf(target.name, report, (Date.now() - started) / 60_000);
  // Stryker's full report stays in .data/ (not committed) for reading the survivors one by one.
  mkdirSync(path.join(ROOT, '.data', 'mutation'), { recursive: true });
  writeFileSync(saved(target.name), JSON.stringify({ score, report, commit: commitNow() }));
  rmSync(work, { recursive: true, force: true });
  return { score, report };
}

const saved = (name: string) => path.join(ROOT, '.data', 'mutation', `${name}.json`);
const commitNow = () => spawnSync('git', ['describe', '--always', '--dirty', '--abbrev=10'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();

const SURVIVORS_SHOWN = 12;

/** The surviving (and uncovered) mutants of a report, counted by file and the first few named by line. */
function survivorsByFile(report: Report): string[] {
  const lines: string[] = [];
  for (const [file, { mutants }] of Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b))) {
    const alive = mutants.filter((m) => m.status === 'Survived' || m.status === 'NoCoverage')
      .sort((a, b) => a.location.start.line - b.location.start.line);
    const detected = mutants.filter((m) => m.status === 'Killed' || m.status === 'Timeout').length;
    lines.push(`- \`${path.relative(ROOT, path.resolve(ROOT, file))}\`: ${detected} detected, ${alive.length} survived`);
    for (const m of alive.slice(0, SURVIVORS_SHOWN)) {
      const replacement = (m.replacement ?? '').replace(/\s+/g, ' ').replace(/`/g, "'");
      const shown = replacement.length > 60 ? `${replacement.slice(0, 57)}...` : replacement;
      lines.push(`  - line ${m.location.start.line}: ${m.mutatorName}${shown ? ` → \`${shown}\`` : ''}`);
    }
    if (alive.length > SURVIVORS_SHOWN) lines.push(`  - ... ${alive.length - SURVIVORS_SHOWN} more (\`.data/mutation/<target>.json\` after a run)`);
  }
  return lines;
}

/** One target's section of docs/mutation-score.md, between markers so a run of one target replaces only its own. */
function section(score: Score, report: Report, commit: string): string {
  const s = score;
  return [
    `<!-- mutation:${s.target} -->`,
    `## ${s.target}`,
    '',
    `Measured at commit ${commit} by \`npm run bench -- mutation --only ${s.target}\` (StrykerJS ${stryker()}; ${s.minutes.toFixed(0)} min, on a shared machine).`,
    '',
    '| mutants killed | timed out | survived | no coverage | errors | score |',
    '|---|---|---|---|---|---|',
    `| ${s.killed} | ${s.timeout} | ${s.survived} | ${s.noCoverage} | ${s.errors} | ${s.score.toFixed(1)}% |`,
    '',
    'Survivors by file:',
    '',
    ...survivorsByFile(report),
    `<!-- /mutation:${s.target} -->`,
  ].join('\n');
}

const HEADER = [
  '# Mutation score',
  '',
  'Written by `npm run bench -- mutation [--only <target>]`. StrykerJS mutates each target and runs that target\'s own',
  'tests (all of them in one node process) against every mutant; a survived mutant is a change of behaviour no test',
  'noticed. The score is Stryker\'s: detected (killed + timed out) over all valid mutants. Targets: `rl` (the RL math,',
  'rl/ without its adapters), `rl-adapters` (rl/adapters, spans → triplets) and `scheduler` (workflows/async-scheduler.ts).',
  'A run of one target rewrites only that target\'s section, so sections may be at different commits.',
  '',
].join('\n');

/** The old file's sections kept, the measured ones replaced, in TARGETS order. */
function mergeDoc(old: string, fresh: Map<string, string>): string {
  const sections = TARGETS.map((t) => {
    if (fresh.has(t.name)) return fresh.get(t.name)!;
    const m = old.match(new RegExp(`<!-- mutation:${t.name} -->[\\s\\S]*?<!-- /mutation:${t.name} -->`));
    return m?.[0];
  }).filter((x): x is string => x !== undefined);
  return `${HEADER}\n${sections.join('\n\n')}\n`;
}

function main(): void {
  const args = process.argv.slice(2);
  const only = stringFlag(args, 'only');
  if (only && !TARGETS.some((t) => t.name === only)) throw new Error(`--only ${only}: no such target (${TARGETS.map((t) => t.name).join(', ')})`);
  const commit = commitNow();
  const targets = TARGETS.filter((t) => !only || t.name === only);
  // --rewrite: the doc again from the last runs' saved reports, without mutating anything.
  const results = args.includes('--rewrite')
    ? targets.filter((t) => existsSync(saved(t.name))).map((t) => JSON.parse(readFileSync(saved(t.name), 'utf8')) as { score: Score; report: Report; commit: string })
    : targets.map((t) => ({ ...run(t), commit }));
  const fresh = new Map(results.map((r) => [r.score.target, section(r.score, r.report, r.commit)]));
  writeFileSync(DOC, mergeDoc(existsSync(DOC) ? readFileSync(DOC, 'utf8') : '', fresh));
  for (const { score: s } of results) process.stdout.write(`mutation score ${s.target}: ${s.score.toFixed(1)}%\n`);
  writeResult(args, results.map((r) => r.score));
}

function stryker(): string {
  return JSON.parse(readFileSync(path.join(ROOT, 'node_modules', '@stryker-mutator', 'core', 'package.json'), 'utf8')).version;
}

main();
