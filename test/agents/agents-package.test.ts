// The runner library is a package an agent's own repository installs (packages/agents/): built,
// packed, installed into a fresh project from the tarball, type-checked there through its `exports` and types, and
// run: its runner, naming its agent, serves a rollout of a store routed to that agent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startProcess } from '../../common/processes';
import { ROOT } from '../helpers/commands';
import { LLM_RESOURCES, startTestStore } from '../store/helpers';

test('@agl-temporal/agents installs into an agent repository, type-checks there and its runner serves its agent\'s rollouts', { timeout: 600_000 }, async () => {
  const work = mkdtempSync(path.join(tmpdir(), 'agl-agent-repo-'));
  execFileSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'packages/agents/build.ts'), '--pack', work], { cwd: ROOT, stdio: 'pipe' });
  const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
  assert.ok(tarball, 'the package was packed');
  const version = JSON.parse(readFileSync(path.join(ROOT, 'packages/agents/package.json'), 'utf8')).version;
  assert.equal(tarball, `agl-temporal-agents-${version}.tgz`);

  const repo = path.join(work, 'my-agent');
  execFileSync('mkdir', ['-p', repo]);
  writeFileSync(path.join(repo, 'package.json'), JSON.stringify({ name: 'my-agent', version: '1.0.0', private: true }));
  execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', path.join(work, tarball)], { cwd: repo, stdio: 'pipe', timeout: 300_000 });
  writeFileSync(path.join(repo, 'agent.ts'), `
import { startRunners, type AgentFunction } from '@agl-temporal/agents';
import { trainingProvider } from '@agl-temporal/agents/temporal';
const agent: AgentFunction<string> = async (task) => (task === 'hi' ? 1 : 0);
void trainingProvider;
const group = startRunners(1, agent, { storeUrl: process.argv[2]!, agent: 'my-agent', maxRollouts: 1, pollIntervalMs: 100 });
console.log('runner polling');
group.done.then(() => console.log('served', JSON.stringify(group.stats())));
`);
  writeFileSync(path.join(repo, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, module: 'node16', moduleResolution: 'node16', target: 'ES2022', types: ['node'], typeRoots: [path.join(ROOT, 'node_modules/@types')], skipLibCheck: true, outDir: 'out' }, files: ['agent.ts'] }));
  // Type-checked and compiled against the installed package's declarations, as the agent's repository would.
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', repo], { cwd: repo, stdio: 'pipe' });

  const store = await startTestStore();
  try {
    await store.client.addResources(LLM_RESOURCES);
    const rollout = await store.client.enqueueRollout('hi', { metadata: { agl_agent: 'my-agent' } });
    const runner = await startProcess({ name: 'my-agent', command: process.execPath, args: [path.join(repo, 'out/agent.js'), store.server.url], cwd: repo, readyLine: /runner polling/ });
    assert.equal(await runner.exited, 0, runner.output());
    assert.match(runner.output(), /served \{"succeeded":1,"failed":0\}/);
    const [done] = await store.client.waitForRollouts([rollout.rollout_id], 5);
    assert.equal(done?.status, 'succeeded');
  } finally {
    await store.close();
  }
});
