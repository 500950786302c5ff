// The benchmarks `npm run bench -- <name>` knows: the .ts files of test/bench that are not helpers or servers.
import { readdirSync } from 'node:fs';

const HELPERS = ['run.ts', 'all.ts', 'bench-kit.ts', 'report.ts', 'bench-names.ts'];

export function benchNames(): string[] {
  return readdirSync(__dirname)
    .filter((f) => f.endsWith('.ts') && !HELPERS.includes(f) && !f.includes('server'))
    .map((f) => f.replace(/\.ts$/, ''));
}
