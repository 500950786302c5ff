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

/** A GroupCommit whose fsyncs complete only when the test says so, and a flag per flush for when it resolved. */
function handSynced(dir: string) {
  const db = path.join(dir, 'x.sqlite');
  writeFileSync(db, 'db');
  writeFileSync(`${db}-wal`, 'wal');
  const pending: Array<(err: NodeJS.ErrnoException | null) => void> = [];
  const gc = new GroupCommit(`${db}-wal`, db, (_fd, done) => pending.push(done));
  const flush = (commit?: number) => {
    const state = { resolved: false };
    gc.flush(commit).then(() => { state.resolved = true; });
    return state;
  };
  const settle = () => new Promise((r) => setImmediate(r));
  return { gc, pending, flush, settle };
}

test('a flush resolves only after an fsync that started after it, and waits for the next one when one is running', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-gc-'));
  const { gc, pending, flush, settle } = handSynced(dir);
  try {
    const first = flush();
    assert.equal(pending.length, 1, 'the first flush starts an fsync');
    const second = flush(); // its write may not be in the running fsync: it needs the next one
    const third = flush(); // joins the second's queued fsync
    await settle();
    assert.equal(pending.length, 1, 'one fsync at a time');
    pending[0]!(null);
    await settle();
    assert.equal(first.resolved, true);
    assert.equal(second.resolved, false, 'a flush called while an fsync ran must not resolve with it');
    assert.equal(third.resolved, false);
    assert.equal(pending.length, 2, 'the queued fsync starts once the running one ends');
    pending[1]!(null);
    await settle();
    assert.equal(second.resolved, true);
    assert.equal(third.resolved, true);
  } finally {
    gc.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('with commit numbers, a flush whose commit the running fsync covers joins it; a later commit waits for the next', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-gc-'));
  const { gc, pending, flush, settle } = handSynced(dir);
  try {
    const a = flush(5); // starts an fsync covering commits up to 5
    const b = flush(4); // committed before that fsync started: covered
    const c = flush(6); // committed after: needs another fsync
    pending[0]!(null);
    await settle();
    assert.equal(a.resolved, true);
    assert.equal(b.resolved, true, 'a covered commit rides the running fsync');
    assert.equal(c.resolved, false, 'an uncovered commit waits for the next fsync');
    pending[1]!(null);
    await settle();
    assert.equal(c.resolved, true);
  } finally {
    gc.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
