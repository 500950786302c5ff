// `npm run bench`: every comparison, then docs/benchmarks.md (all.ts). `npm run bench -- <name> [args]`: one
// benchmark of test/bench; `npm run bench -- list` names them. Benchmarks print what they measure; none is part
// of `npm test`.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { benchNames } from './bench-names';

const names = benchNames();
const [name, ...args] = process.argv.slice(2);
if (!name) {
  const all = spawnSync(process.execPath, ['--import', 'tsx', path.join(__dirname, 'all.ts')], { stdio: 'inherit' });
  process.exit(all.status ?? 1);
}
if (!names.includes(name)) {
  process.stdout.write(`usage: npm run bench (all, writes docs/benchmarks.md) | npm run bench -- <name> [args]\nbenchmarks: ${names.join(', ')}\n`);
  process.exit(name === 'list' ? 0 : 2);
}
const res = spawnSync(process.execPath, ['--import', 'tsx', path.join(__dirname, `${name}.ts`), ...args], { stdio: 'inherit' });
process.exit(res.status ?? 1);
