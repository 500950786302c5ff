// The trainer's per-request tables stay bounded over a long run: completed futures are kept for a
// while after they settle, then answer as unknown (the server's 410); a model's seq_id dedupe remembers only a
// window of recent ids. Driven with a clock in hand and many requests, as a weeks-long run would.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FutureTable } from '../../trainer/server/futures';
import { SEEN_WINDOW, SeqQueue } from '../../trainer/server/seq-queue';

const json = (n: number) => ({ kind: 'json' as const, body: { n } });

describe('FutureTable', () => {
  test('a completed result stays retrievable for the retention time, then is gone', async () => {
    let now = 0;
    const table = new FutureTable(60_000, 1_000_000, () => now);
    const id = table.create();
    table.settle(id, json(1));
    now = 59_000;
    table.create(); // any later request expires what is due
    assert.deepEqual(await table.wait(id, 10), json(1));
    now = 61_000;
    table.create();
    assert.equal(await table.wait(id, 10), undefined);
  });

  test('a pending future is never expired, however old', async () => {
    let now = 0;
    const table = new FutureTable(1_000, 1_000_000, () => now);
    const slow = table.create();
    for (let i = 0; i < 50; i++) {
      now += 1_000;
      table.settle(table.create(), json(i));
    }
    assert.ok(table.has(slow));
    table.settle(slow, json(-1));
    assert.deepEqual(await table.wait(slow, 10), json(-1));
  });

  test('the table holds what settled within the retention time, not what the run ever made', () => {
    let now = 0;
    const table = new FutureTable(10_000, 1_000_000, () => now);
    for (let i = 0; i < 100_000; i++) {
      now += 10; // 100 results a second
      table.settle(table.create(), json(i));
    }
    assert.ok(table.size <= 1_001, `${table.size} futures held`);
  });
});

describe('SeqQueue', () => {
  const submitAll = async (q: SeqQueue, from: number, to: number) => {
    let ran = 0;
    for (let s = from; s < to; s++) q.submit(s, `req-${s}`, async () => void ran++, () => {});
    while (ran < to - from) await new Promise((r) => setImmediate(r)); // each runs after its own setImmediate
  };

  test('a repeated recent seq_id gets its first request_id; one far behind is refused as behind', async () => {
    const q = new SeqQueue(1, 60_000);
    const total = SEEN_WINDOW * 3;
    await submitAll(q, 1, total + 1);
    assert.equal(q.submit(total, 'again', async () => {}, () => {}), `req-${total}`);
    assert.equal(q.submit(total - SEEN_WINDOW + 1, 'again', async () => {}, () => {}), `req-${total - SEEN_WINDOW + 1}`);
    assert.throws(() => q.submit(total - SEEN_WINDOW, 'again', async () => {}, () => {}), /is behind/, 'the first id out of the window');
    assert.throws(() => q.submit(1, 'again', async () => {}, () => {}), /seq_id 1 is behind/);
    assert.equal(q.nextSeqId(), total + 1);
  });
});
