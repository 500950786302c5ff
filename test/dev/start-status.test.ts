// What npm start's progress line says while the local trainer builds a base model: read from the lines the real
// build prints (the quick test model's recipe with another seed, so the shipped weights do not apply and it is
// built for real), with an estimate of the time left once it has a pace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadOrBuildBase, recipeFor } from '../../trainer/model/base-models';
import { BaseBuildWatch } from '../../dev/start-status';

test('a base model build in the trainer output is shown with its step and an estimate; none once it is built', async () => {
  const lines: string[] = [];
  await loadOrBuildBase(mkdtempSync(path.join(tmpdir(), 'agl-build-')), { ...recipeFor('local/tiny-test'), seed: 977 }, (l) => lines.push(l));
  const stepLines = lines.filter((l) => / step \d+\/\d+/.test(l));
  assert.ok(stepLines.length >= 2, `the build printed its steps: ${lines.join(' / ')}`);

  let output = '';
  const watch = new BaseBuildWatch(() => output);
  assert.equal(watch.line(0), null, 'nothing printed: nothing to say');
  output += `${stepLines[0]}\n`;
  assert.match(watch.line(0)!, /^building the base model local\/tiny-test \(first start only, then cached\): step 1\/\d+, about 3 minutes on 2 cores$/);
  output += `${stepLines[1]}\n`;
  // The second step line came 60 s after the first: the estimate follows that pace.
  assert.match(watch.line(60_000)!, /: step \d+\/\d+, about \d+ min left$/);
  output += `${lines.filter((l) => / built in /.test(l)).join('\n')}\n`;
  assert.equal(watch.line(61_000), null, 'built: nothing to wait for');
});
