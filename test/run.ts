// `npm test`: provisions the Temporal CLI once (so no test downloads anything), then runs every
// test/**/*.test.ts (or the files/folders given as arguments) with node's built-in test runner: one line per file,
// and the output of a file only when one of its tests fails (test/quiet-reporter.mjs; AGL_TEST_VERBOSE=1 shows
// everything as node's spec reporter does). Scratch files of the tests go to one temporary folder, removed at the
// end, and nothing is written into the project (no agentops.log from the Python runners).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { provisionTemporalCli } from '../dev/temporal-cli';

const ROOT = path.resolve(__dirname, '..');

function findTests(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...findTests(full));
    else if (name.endsWith('.test.ts')) out.push(full);
  }
  return out;
}

async function main(): Promise<void> {
  const cli = await provisionTemporalCli();
  const targets = process.argv.slice(2);
  const files = (targets.length ? targets : ['test']).flatMap((t) => {
    const full = path.resolve(ROOT, t);
    return statSync(full).isDirectory() ? findTests(full) : [full];
  });
  if (files.length === 0) throw new Error('no test files found');
  const verbose = process.env.AGL_TEST_VERBOSE === '1';
  const scratch = mkdtempSync(path.join(tmpdir(), 'agl-test-'));
  const started = Date.now();
  let result;
  try {
    result = spawnSync(
      process.execPath,
      [
        '--import', 'tsx', '--test', '--test-concurrency=1',
        // A test that hangs (a held activity never released, say) fails after 15 minutes instead of stalling CI;
        // the slowest test, the chaos suite, takes about 3.
        '--test-timeout=900000',
        `--test-reporter=${verbose ? 'spec' : './test/quiet-reporter.mjs'}`,
        ...files.map((f) => path.relative(ROOT, f)),
      ],
      {
        cwd: ROOT,
        stdio: 'inherit',
        env: { ...process.env, TEMPORAL_CLI: cli.path, AGL_TEST_SCRATCH: scratch, AGENTOPS_LOGGING_TO_FILE: 'False' },
      },
    );
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  process.stdout.write(`${files.length} test files in ${((Date.now() - started) / 60_000).toFixed(1)} min\n`);
  process.exit(result.status ?? 1);
}

main().catch((err: Error) => {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
});
