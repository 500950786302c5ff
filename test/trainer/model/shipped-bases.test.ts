// The base models shipped with the project are what their recipes build: each matches its recipe's hash and
// checksum (a recipe changed without rebuilding the weights fails here), the smallest rebuilds to the same bytes,
// and a fresh data folder takes the shipped weights instead of building.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadOrBuildBase, recipeFor, recipeHash, RECIPES, trainBase } from '../../../trainer/model/base-models';
import { sha256 } from '../../../trainer/model/checkpoint';
import { readShipped } from '../../../trainer/model/shipped-bases';

test('every recipe has shipped weights built from it (run trainer/model/rebuild-bases.ts after changing one)', async () => {
  for (const r of RECIPES) {
    const shipped = await readShipped(r.name, recipeHash(r));
    assert.ok(shipped, `${r.name}: no shipped weights for recipe ${recipeHash(r)}`);
  }
});

test('the recipe rebuilds the shipped bytes (local/tiny-test)', async () => {
  const r = recipeFor('local/tiny-test');
  assert.equal(sha256(await trainBase(r)), sha256((await readShipped(r.name, recipeHash(r)))!));
});

test('a fresh data folder gets the shipped weights, not a build', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-shipped-'));
  try {
    const r = recipeFor('local/tiny-hello');
    const lines: string[] = [];
    const t0 = Date.now();
    const params = await loadOrBuildBase(dir, r, (l) => lines.push(l));
    assert.ok(Date.now() - t0 < 20_000, 'no 3-minute build');
    assert.equal(sha256(params), sha256((await readShipped(r.name, recipeHash(r)))!));
    assert.match(lines.join('\n'), /taken from the shipped weights/);
    assert.equal(sha256(await loadOrBuildBase(dir, r)), sha256(params), 'and cached for the next start');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
