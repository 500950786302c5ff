// `npm test`: provisions the Temporal CLI once (so no test downloads anything), then runs every
// test/**/*.test.ts (or the files/folders given as arguments) with node's built-in test runner.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
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
  const result = spawnSync(
    process.execPath,
    // A test that hangs (a held activity never released, say) fails after 15 minutes instead of stalling CI;
    // the slowest test, the chaos suite, takes about 3.
    ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-timeout=900000', ...files.map((f) => path.relative(ROOT, f))],
    { cwd: ROOT, stdio: 'inherit', env: { ...process.env, TEMPORAL_CLI: cli.path } },
  );
  process.exit(result.status ?? 1);
}

main().catch((err: Error) => {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
});
