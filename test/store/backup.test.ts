// docs/several-hosts.md's backup command, run as written (paths changed) on a store that is being written to: the
// copy passes PRAGMA integrity_check and holds every rollout acknowledged before the backup began.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { docCommands } from '../docs/doc-commands';
import { startTestStore } from './helpers';

const ROOT = path.resolve(__dirname, '..', '..');

test("the docs' sqlite3 VACUUM INTO backup of a store being written to is whole and consistent", async () => {
  const doc = 'docs/several-hosts.md';
  const cmd = docCommands(doc, readFileSync(path.join(ROOT, doc), 'utf8')).find((c) => c.words[0] === 'sqlite3');
  assert.ok(cmd, `${doc} has no sqlite3 command`);
  const [, dbArg, sql] = cmd.words;
  assert.match(sql!, /^VACUUM INTO '/);
  const store = await startTestStore();
  try {
    const dbPath = path.join(store.dir, 'store.sqlite');
    const copy = path.join(store.dir, 'copy.db');
    // The doc's SQL with its target path (and its $(date +%F)) replaced by the test's copy.
    const ourSql = sql!.replace(/'[^']*'/, `'${copy}'`);
    for (let i = 0; i < 50; i++) await store.client.enqueueRollout({ i });
    const acknowledgedBefore = 50;
    let writing = true;
    const writer = (async () => {
      for (let i = 50; writing; i++) await store.client.enqueueRollout({ i });
    })();
    await new Promise((r) => setTimeout(r, 100));
    // The sqlite3 CLI where it is installed (Debian's sqlite3, as the doc says); else the same SQL through SQLite's
    // library, which is what the CLI runs.
    if (existsSync('/usr/bin/sqlite3')) {
      const res = spawnSync('/usr/bin/sqlite3', [dbArg!.replace('/var/lib/agl/store/store.sqlite', dbPath), ourSql], { encoding: 'utf8', timeout: 30_000 });
      assert.equal(res.status, 0, res.stderr);
    } else {
      const db = new Database(dbPath);
      db.exec(ourSql);
      db.close();
    }
    writing = false;
    await writer;
    const backup = new Database(copy, { readonly: true });
    try {
      assert.equal(backup.pragma('integrity_check', { simple: true }), 'ok');
      const rows = (backup.prepare('SELECT COUNT(*) AS n FROM rollouts').get() as { n: number }).n;
      assert.ok(rows >= acknowledgedBefore, `the copy has ${rows} rollouts, fewer than the ${acknowledgedBefore} acknowledged before it`);
    } finally {
      backup.close();
    }
  } finally {
    await store.close();
  }
});
