// The store on a 2 MiB volume that fills up: writes are answered 507 with the reason while it is full, reads go on,
// health says disk_full; once the space comes back the store takes writes again by itself (no restart), and its
// WAL stays smaller than the room left, so it cannot eat the freed space (it did: every write failed until restart).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import path from 'node:path';
import { StoreClient, StoreHttpError } from '../../store/client';
import { startStoreServer } from '../../store/server';
import type { Span } from '../../store/types';
import { mountSmallVolume } from '../helpers/small-volume';

const span = (rolloutId: string, attemptId: string, i: number): Span => ({
  rollout_id: rolloutId, attempt_id: attemptId, sequence_id: i, trace_id: '0'.repeat(32), span_id: i.toString(16).padStart(16, '0'),
  parent_id: null, name: 'work', status: { status_code: 'OK', description: null }, attributes: { payload: 'p'.repeat(1500) },
  events: [], links: [], start_time: i, end_time: i, context: null, parent: null, resource: { attributes: {}, schema_url: '' },
} as unknown as Span);

test('a store on a 2 MiB volume: 507 while full, reads and health meanwhile, writes again by itself once space is back', { timeout: 120_000 }, async () => {
  const vol = mountSmallVolume(2 * 1024 * 1024);
  const dbPath = path.join(vol.dir, 'store.sqlite');
  const lines: string[] = [];
  const server = await startStoreServer({ dbPath, port: 0, watchdogIntervalMs: 200, log: (l) => lines.push(l) });
  const client = new StoreClient(server.url, { retryDelaysMs: [] });
  try {
    const r = await client.startRollout('disk', { workerId: 'w' });
    let seq = 0;
    const write = () => client.addSpan(span(r.rollout_id, r.attempt.attempt_id, ++seq), { timeoutMs: 10_000 });
    for (let i = 0; i < 50; i++) await write();

    vol.fill();
    // Writes until the disk refuses one: answered 507 with the reason.
    let refused: StoreHttpError | undefined;
    for (let i = 0; i < 2000 && !refused; i++) {
      await write().catch((err: unknown) => {
        if (!(err instanceof StoreHttpError)) throw err;
        refused = err;
      });
    }
    assert.ok(refused, 'a write was refused');
    assert.equal(refused.status, 507, refused.message);
    assert.match(refused.body, /the store's disk is full .*writes are refused until space is freed/);
    const health = await fetch(`${server.url}/v1/agl/health`);
    assert.equal(health.status, 503);
    assert.equal(((await health.json()) as { status: string }).status, 'disk_full');
    assert.equal((await client.getRolloutById(r.rollout_id))?.rollout_id, r.rollout_id, 'reads go on');
    // More refused writes while full: none lands half-way, the store keeps answering.
    for (let i = 0; i < 20; i++) await assert.rejects(write(), (err: unknown) => err instanceof StoreHttpError && err.status === 507);

    vol.free();
    // No restart: the next writes land (the first ones may still meet the WAL being given back).
    let landed = 0;
    for (let i = 0; i < 200 && landed < 100; i++) {
      await write().then(() => landed++, (err: unknown) => {
        if (!(err instanceof StoreHttpError && err.status === 507)) throw err;
      });
    }
    assert.equal(landed, 100, 'writes land again once space is back');
    assert.equal(await client.health(), true, 'health is ok again');
    const wal = statSync(`${dbPath}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    assert.ok(wal < vol.freeBytes(), `the WAL (${wal} bytes) is smaller than the room left (${vol.freeBytes()} bytes)`);
    assert.ok(lines.some((l) => /disk full/.test(l)) && lines.some((l) => /room again/.test(l)), lines.join('\n'));
  } finally {
    await server.close();
    vol.unmount();
  }
});
