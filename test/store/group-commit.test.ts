// Group commit: concurrent flushes share fsyncs, and every flush resolves after an fsync that started after it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { GroupCommit } from '../../store/group-commit';

test('concurrent flushes are batched into few fsyncs; a missing WAL falls back to the database file', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-gc-'));
  try {
    const db = path.join(dir, 'x.sqlite');
    writeFileSync(db, 'db');
    const gc = new GroupCommit(`${db}-wal`, db);
    await gc.flush(); // no WAL yet: syncs the database file
    writeFileSync(`${db}-wal`, 'wal');
    const flushes = Array.from({ length: 50 }, () => gc.flush());
    // All but the first join one queued fsync: at most two distinct promises.
    assert.ok(new Set(flushes).size <= 2, `distinct fsyncs: ${new Set(flushes).size}`);
    await Promise.all(flushes);
    await gc.flush();
    gc.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
