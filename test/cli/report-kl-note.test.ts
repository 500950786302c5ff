// A synchronous run's report says why its KL panel is two flat lines at 0: kl_sample_train compares the sampler with
// the trainer, and a sync run samples on-policy (the same weights), so ~0 is expected. An async run's says why its
// KL is not 0. Written by `client report <run directory>` as a user writes it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { client } from '../helpers/commands';

function runDir(name: string, async: object | null, kl: number): string {
  const dir = path.join(mkdtempSync(path.join(tmpdir(), 'agl-kl-note-')), name);
  mkdirSync(dir);
  const rows = [0, 1, 2].map((step) => ({ step, 'env/all/reward/total': step / 4, 'optim/kl_sample_train_v1': kl, 'optim/kl_sample_train_v2': kl / 2, 'time/total': 1 }));
  writeFileSync(path.join(dir, 'metrics.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ runName: name, learningRate: 0.01, modelName: 'local/tiny-hello', async }));
  return dir;
}

/** The KL panel of a report page: its section, from the title to the next one. */
function klSection(html: string): string {
  const start = html.indexOf('<h3>KL diagnostics</h3>');
  assert.ok(start >= 0, 'the report has a KL panel');
  return html.slice(start, html.indexOf('</section>', start));
}

test('a sync run\'s KL panel says it is ~0 by design (on-policy: sampler and trainer weights are the same)', { timeout: 60_000 }, async () => {
  const dir = runDir('sync-kl', null, 0);
  const r = await client(['report', dir]);
  assert.equal(r.code, 0, r.stderr);
  const kl = klSection(readFileSync(path.join(dir, 'report.html'), 'utf8'));
  assert.match(kl, /<p class="note">kl_sample_train: .*A synchronous run samples on-policy: each batch is sampled with the very weights the trainer then trains, so sampler and trainer agree and KL ~0 \(flat lines at 0\) is expected/);
});

test('an async run\'s KL panel says why its KL is above 0', { timeout: 60_000 }, async () => {
  const dir = runDir('async-kl', { maxStepsOffPolicy: 2, groupsPerBatch: 4 }, 0.02);
  const r = await client(['report', dir]);
  assert.equal(r.code, 0, r.stderr);
  const kl = klSection(readFileSync(path.join(dir, 'report.html'), 'utf8'));
  assert.match(kl, /An async run samples off-policy \(up to maxStepsOffPolicy steps behind\), so its kl_sample_train is above 0/);
  assert.doesNotMatch(kl, /A synchronous run/);
});
