// A damaged database is refused, never served (store/damage.ts). 4 KiB of a stopped store's file overwritten: the
// store refuses to start with one line that says how to restore a backup (it used to start without a word, say
// healthy and take writes, then answer 500 for the damaged rollout and rollouts/search). A page damaged under a
// running store: health turns 503 "damaged" within a minute (the background check) and every other request gets
// the same one line instead of scattered 500s; a request that meets the damage first does the same.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startProcess } from '../../common/processes';
import { StoreClient } from '../../store/client';
import { startStoreWithGateway } from '../../gateway/store-server';
import type { StoreServer } from '../../store/server';
import { setTimeout as timersSleep } from 'node:timers/promises';
import { sleep } from './helpers';

const ROOT = path.resolve(__dirname, '..', '..');

/** A store database with a few hundred rollouts over many pages, closed (its WAL folded into the file). */
async function filledStore(dir: string): Promise<{ dbPath: string; ids: string[] }> {
  const dbPath = path.join(dir, 'store.sqlite');
  const server = await startStoreWithGateway({ dbPath, port: 0, log: () => {}, integrityCheckMs: 0 });
  const client = new StoreClient(server.url, { retryDelaysMs: [] });
  const ids: string[] = [];
  for (let i = 0; i < 300; i++) ids.push((await client.enqueueRollout({ task: i, text: 'p'.repeat(400 + (i % 7) * 100) })).rollout_id);
  await server.close();
  return { dbPath, ids };
}

/** A leaf page in the middle of `table`'s b-tree (SQLite's dbstat), so a scan of that table must read it. */
function leafPageOf(dbPath: string, table: string): number {
  const db = new Database(dbPath, { readonly: true });
  try {
    const pages = db.prepare("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno").all(table) as { pageno: number }[];
    if (pages.length === 0) throw new Error(`no leaf page of ${table} in ${dbPath}`);
    return pages[Math.floor(pages.length / 2)]!.pageno - 1; // dbstat counts pages from 1
  } finally {
    db.close();
  }
}

/** Overwrites 4 KiB (one page; by default the middle of the file) with bytes that are no page of a b-tree. */
function overwritePage(dbPath: string, page = Math.floor(statSync(dbPath).size / 4096 / 2)): void {
  const pageSize = 4096;
  const fd = openSync(dbPath, 'r+');
  try {
    const junk = Buffer.alloc(pageSize);
    for (let i = 0; i < pageSize; i++) junk[i] = (i * 151 + 89) & 0xff;
    writeSync(fd, junk, 0, pageSize, page * pageSize);
  } finally {
    closeSync(fd);
  }
}

/** What SQLite itself says of the file: the premise of each test (the page overwritten is one it checks). */
function sqliteSays(dbPath: string): string {
  const db = new Database(dbPath, { readonly: true });
  try {
    return (db.pragma('quick_check') as { quick_check: string }[]).map((r) => r.quick_check).join('; ');
  } catch (err) {
    return (err as Error).message;
  } finally {
    db.close();
  }
}

test('a store whose file was damaged while it was stopped refuses to start, in one line saying how to restore a backup', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-store-damaged-'));
  try {
    const { dbPath } = await filledStore(dir);
    overwritePage(dbPath);
    assert.notEqual(sqliteSays(dbPath), 'ok', 'SQLite finds the overwritten page');

    // In process: startStoreWithGateway throws the one line.
    await assert.rejects(startStoreWithGateway({ dbPath, port: 0, log: () => {} }), (err: Error) => {
      assert.equal(err.name, 'DatabaseDamagedError');
      assert.doesNotMatch(err.message, /\n/);
      assert.match(err.message, /store\.sqlite is damaged .*restore a backup: stop the store, put a backup copy .*VACUUM INTO.* in place of store\.sqlite, remove store\.sqlite-wal and store\.sqlite-shm/);
      return true;
    });

    // As `npm run store` runs it: exit 1 with that line and nothing else (no stack trace), never "listening".
    const p = await startProcess({ name: 'store', command: process.execPath, args: ['--import', 'tsx', 'gateway/main.ts', '--port', '0', '--data', dir], cwd: ROOT });
    const code = await Promise.race([p.exited, timersSleep(60_000, 'still running', { ref: false })]);
    p.kill9();
    const out = p.output().trim();
    assert.equal(code, 1, out);
    assert.doesNotMatch(out, /listening/);
    assert.equal(out.split('\n').length, 1, out);
    assert.match(out, /^store: the database .*store\.sqlite is damaged \(.*\); it was not opened\. To restore a backup: /);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a file that is not a database at all is refused the same way', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-store-notadb-'));
  try {
    const { dbPath } = await filledStore(dir);
    const fd = openSync(dbPath, 'r+');
    writeSync(fd, Buffer.alloc(4096, 0x41), 0, 4096, 0); // the header page
    closeSync(fd);
    await assert.rejects(startStoreWithGateway({ dbPath, port: 0, log: () => {} }), /store\.sqlite is damaged \(.*not a database.*\).*restore a backup/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

async function expectDamaged(server: StoreServer, lines: string[]): Promise<void> {
  const health = await fetch(`${server.url}/v1/agl/health`);
  assert.equal(health.status, 503);
  const body = (await health.json()) as { status: string; detail: string };
  assert.equal(body.status, 'damaged');
  assert.match(body.detail, /store\.sqlite is damaged .*restore/);
  assert.equal((await fetch(`${server.url}/healthz`)).status, 503, 'the 1.0 gateway says so too');
  // Every other request: the same one line, 503, instead of a 500 here and a wrong answer there.
  for (const [method, p] of [['GET', '/v1/agl/rollouts'], ['POST', '/v1/agl/rollouts/search'], ['POST', '/v1/agl/queues/rollouts/enqueue'], ['GET', '/api/rollouts?state_in=queuing']] as const) {
    const a = await fetch(`${server.url}${p}`, { method, headers: { 'content-type': 'application/json' }, body: method === 'POST' ? '{"rollouts": []}' : undefined });
    assert.equal(a.status, 503, `${method} ${p}`);
    const detail = ((await a.json()) as { detail: string }).detail;
    assert.match(detail, /damaged .*restore/);
    assert.doesNotMatch(detail, /\n/);
  }
  assert.equal(await new StoreClient(server.url, { retryDelaysMs: [] }).health(), false);
  assert.ok(lines.some((l) => /^DATABASE DAMAGED: .*store\.sqlite/.test(l)), lines.join('\n'));
}

test('a page damaged under a running store: unhealthy within a minute, every request refused in one line', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-store-damaged-live-'));
  const lines: string[] = [];
  const { dbPath, ids } = await filledStore(dir);
  const server = await startStoreWithGateway({ dbPath, port: 0, log: (l) => lines.push(l), integrityCheckMs: 1000 });
  try {
    const client = new StoreClient(server.url, { retryDelaysMs: [] });
    assert.equal((await client.getRolloutById(ids[0]!))?.rollout_id, ids[0]);
    assert.equal(await client.health(), true);
    overwritePage(dbPath); // the store's page cache still holds the page: no request would notice soon
    const started = Date.now();
    while (Date.now() - started < 60_000 && (await fetch(`${server.url}/v1/agl/health`)).status === 200) await sleep(200);
    assert.ok(Date.now() - started < 60_000, 'unhealthy within a minute');
    await expectDamaged(server, lines);
  } finally {
    await server.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a request that meets a damaged page turns the store unhealthy instead of answering 500', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-store-damaged-req-'));
  const lines: string[] = [];
  const { dbPath } = await filledStore(dir);
  const page = leafPageOf(dbPath, 'rollouts'); // rollouts/search scans this table: the request meets the damage
  const server = await startStoreWithGateway({ dbPath, port: 0, log: (l) => lines.push(l), integrityCheckMs: 0 });
  try {
    overwritePage(dbPath, page);
    server.store.storeDb.db.pragma('shrink_memory'); // the page cache let go: the next read comes from the file
    const search = await fetch(`${server.url}/v1/agl/rollouts/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(search.status, 503, await search.clone().text());
    assert.match(((await search.json()) as { detail: string }).detail, /damaged .*restore/);
    await expectDamaged(server, lines);
  } finally {
    await server.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
});
