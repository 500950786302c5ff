// The Node version the project states is one every installed package supports, so `npm ci` on it prints no
// EBADENGINE warning: package.json's engines.node, its lowest version, and README's "Node 20 (20.17 or later)" agree,
// and every package in package-lock.json that declares engines.node admits that lowest version and the machines'
// Node (the one running this test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../helpers/commands';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const semver = require('semver') as { satisfies(version: string, range: string): boolean; minVersion(range: string): { version: string } | null };

const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; engines?: { node?: string } | string[] }> };

test('every locked package supports the Node versions package.json states, and README states the same', () => {
  const lowest = semver.minVersion(pkg.engines.node)!.version;
  const [major, minor] = lowest.split('.');
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  assert.match(readme, new RegExp(`Node ${major} \\(${major}\\.${minor} or later\\)`), `README states Node ${major}.${minor} or later, as engines.node ${pkg.engines.node}`);
  const refusing: string[] = [];
  for (const [where, p] of Object.entries(lock.packages)) {
    const node = !Array.isArray(p.engines) ? p.engines?.node : undefined;
    if (!where || !node) continue;
    for (const v of [lowest, process.versions.node]) if (!semver.satisfies(v, node)) refusing.push(`${where} ${p.version}: node ${node} excludes ${v}`);
  }
  assert.deepEqual(refusing, [], 'npm ci would warn EBADENGINE for these');
});
