// `npm run bench -- <name> [args]`: runs one benchmark of test/bench (or lists them). Benchmarks print what they
// measure; none is part of `npm test`.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';

const names = readdirSync(__dirname)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.includes('server'))
  .map((f) => f.replace(/\.ts$/, ''));
const [name, ...args] = process.argv.slice(2);
if (!name || !names.includes(name)) {
  process.stdout.write(`usage: npm run bench -- <name> [args]\nbenchmarks: ${names.join(', ')}\n`);
  process.exit(name ? 2 : 0);
}
const res = spawnSync(process.execPath, ['--import', 'tsx', path.join(__dirname, `${name}.ts`), ...args], { stdio: 'inherit' });
process.exit(res.status ?? 1);
