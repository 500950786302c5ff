// The folders' layering (.dependency-cruiser.cjs): imports point only down the way data moves through a run, and no
// file imports itself back through others, type-only imports included. Checked with dependency-cruiser over the
// project's own code (tests left out).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';

const ROOT = path.resolve(__dirname, '..');

test('imports follow the layering of the folders, with no circle', () => {
  const bin = path.join(ROOT, 'node_modules', '.bin', 'depcruise');
  let out = '';
  let failed = false;
  try {
    out = execFileSync(bin, ['--config', '.dependency-cruiser.cjs', '--output-type', 'err', '.'], { cwd: ROOT, encoding: 'utf8', stdio: 'pipe' });
  } catch (err) {
    failed = true;
    out = String((err as { stdout?: string }).stdout ?? '') + String((err as { stderr?: string }).stderr ?? '');
  }
  assert.equal(failed, false, out);
  assert.match(out, /no dependency violations found \((\d+) modules/);
  const modules = Number(/\((\d+) modules/.exec(out)![1]);
  assert.ok(modules > 300, `only ${modules} modules were read: the check did not see the project`);
});
