// Saved histories of real runs replayed through the current workflow code: a change that would break
// determinism for runs already in flight fails here. Re-record with AGL_RECORD_HISTORIES=1 only for an
// intentional, versioned change.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { workflowBundle, quietRuntime } from '../helpers/temporal';

const dir = path.join(__dirname, 'histories');
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));

test('there are saved histories to replay', () => {
  assert.ok(files.length > 0);
});

for (const file of files) {
  test(`replays ${file} without nondeterminism`, async () => {
    quietRuntime();
    const history = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, file);
  });
}
