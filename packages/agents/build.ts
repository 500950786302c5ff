// Builds the `@agl-temporal/agents` package (dist/ beside this file) and, with --pack, packs it to a tarball an
// agent's own repository installs (`npm install path/to/agl-temporal-agents-0.1.0.tgz`). `npm run build:agents`.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';

const dir = __dirname;
rmSync(path.join(dir, 'dist'), { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join(dir, 'tsconfig.json')], { stdio: 'inherit' });
if (process.argv.includes('--pack')) {
  const out = process.argv[process.argv.indexOf('--pack') + 1] ?? dir;
  execFileSync('npm', ['pack', '--pack-destination', out], { cwd: dir, stdio: ['ignore', 'inherit', 'inherit'] });
}
