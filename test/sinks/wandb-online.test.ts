// The W&B stream through the official JavaScript SDK (@wandb/sdk), against a local stand-in for W&B's API
// (GraphQL upsertBucket and the file_stream endpoint; no W&B server can be reached from CI). A worker that
// streamed three steps is killed; the next one streams five and finishes. W&B's history then holds each step
// once, on the line of its number, in one run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

interface FakeWandb {
  url: string;
  upserts: Record<string, unknown>[];
  history: string[];
  writes: number;
  completes: number;
  close(): void;
}

async function fakeWandb(): Promise<FakeWandb> {
  const state = { upserts: [] as Record<string, unknown>[], history: [] as string[], writes: 0, completes: 0 };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const json = body ? (JSON.parse(body) as Record<string, any>) : {};
      res.setHeader('content-type', 'application/json');
      if (req.url === '/graphql') {
        const v = json.variables ?? {};
        if (String(json.query).includes('upsertBucket')) {
          state.upserts.push(v);
          const bucket = { id: 'b', name: v.name, displayName: v.displayName ?? 'auto', description: '', config: v.config, sweepName: null, project: { id: 'p', name: v.project, entity: { id: 'e', name: v.entity } } };
          res.end(JSON.stringify({ data: { upsertBucket: { bucket, inserted: state.upserts.length === 1 } } }));
        } else res.end(JSON.stringify({ data: { viewer: { id: 'u', entity: 'tester', flags: '{}', teams: { edges: [] } } } }));
        return;
      }
      if (/^\/files\/tester\/agl-test\/[^/]+\/file_stream$/.test(req.url ?? '')) {
        const h = json.files?.['wandb-history.jsonl'];
        if (h) h.content.forEach((line: string, i: number) => ((state.history[h.offset + i] = line), state.writes++));
        if (json.complete) state.completes++;
        res.end('{}');
        return;
      }
      res.statusCode = 404;
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, ...state, get upserts() { return state.upserts; }, get history() { return state.history; }, get writes() { return state.writes; }, get completes() { return state.completes; }, close: () => server.close() } as FakeWandb;
}

function driver(env: NodeJS.ProcessEnv, rows: number, mode: 'wait' | 'finish') {
  return spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'wandb-stream-driver.ts'), String(rows), mode], { env, stdio: ['ignore', 'pipe', 'inherit'] });
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 600 && !cond(); i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(cond(), what);
}

test('a killed worker and the next one: one W&B run, each step once on its own line, finished once', { timeout: 180_000 }, async () => {
  const w = await fakeWandb();
  try {
    const env = { ...process.env, WANDB_BASE_URL: w.url, WANDB_API_KEY: 'k'.repeat(40), WANDB_MODE: 'online' };
    const first = driver(env, 3, 'wait');
    await until(() => w.history.filter(Boolean).length >= 3, 'the first worker streamed its three steps');
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));

    const second = driver(env, 5, 'finish');
    let out = '';
    second.stdout!.on('data', (c) => (out += c));
    await new Promise((r) => second.once('exit', r));
    assert.match(out, /finished/);

    assert.equal(w.upserts.length, 2, 'each worker resumed the run by its id');
    assert.deepEqual(new Set(w.upserts.map((u) => u.name)), new Set(['abc123def456']));
    assert.equal(w.upserts[0]!.displayName, 'stream test');
    assert.deepEqual(JSON.parse(String(w.upserts[0]!.config)), { learningRate: 0.003 });
    const lines = w.history.map((l) => JSON.parse(l) as Record<string, number>);
    assert.deepEqual(lines.map((l) => l._step), [0, 1, 2, 3, 4], 'line i is step i: nothing duplicated, nothing lost');
    assert.deepEqual(lines.map((l) => l['env/all/reward/total']), [0, 0.1, 0.2, 0.3, 0.4]);
    assert.equal(w.completes, 1, 'marked finished once, by the worker that finished it');
  } finally {
    w.close();
  }
});
