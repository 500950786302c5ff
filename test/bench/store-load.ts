// Load test (not part of npm test): N rollouts through TS runners against our store and, in the same run, against
// the Python `agl store` (v0.3.0). Checks none lost and none duplicated; reports rollouts/s, p50/p99
// enqueue→succeeded latency (the store's own start_time → end_time), the store's CPU per rollout, and ours
// against agl's.
// Usage: npm run bench -- store-load [--rollouts 2000] [--runners 32] [--only ts|python] [--sync full|normal]
//        [--url http://…]  (use a TS store that is already running instead of starting one)
//        [--rate R]  (enqueue R rollouts/s instead of all at once, to see latency below saturation) [--json FILE]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { waitForHttp } from '../../common/http';
import { freePort } from '../../common/ports';
import { startProcess, stopAllProcesses, type ManagedProcess } from '../../common/processes';
import { rewardOf } from '../../store/reward-span';
import { startRunners } from '../../agents/runner';
import { StoreClient } from '../../store/client';
import type { Rollout } from '../../store/types';
import { aglVenv, pythonEnv } from '../interop/store-python';
import { cpuSeconds, loadAverage, quantile, writeResult } from './bench-kit';

const ROOT = path.resolve(__dirname, '..', '..');
const { values } = parseArgs({
  options: { rollouts: { type: 'string', default: '2000' }, runners: { type: 'string', default: '32' }, only: { type: 'string' }, sync: { type: 'string', default: 'full' }, url: { type: 'string' }, rate: { type: 'string' }, json: { type: 'string' } },
});
const N = Number(values.rollouts);
const RUNNERS = Number(values.runners);
const WARMUP = Math.min(200, Math.ceil(N / 10));

interface Result {
  store: string; rollouts: number; seconds: number; perSecond: number; p50: number; p99: number; lost: number; duplicated: number;
  /** CPU seconds the store process used for the whole run: comparable even on a busy, shared machine. */
  storeCpuSec: number;
  /** CPU seconds this process (runners and enqueuer) used. */
  runnerCpuSec: number;
}

async function pool<T>(items: T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => { while (next < items.length) await fn(items[next++]!); }));
}

/** Enqueues rollouts i of `items` (16 at a time, or at --rate per second) and waits for all of them. */
async function enqueueAndWait(client: StoreClient, items: number[]): Promise<{ ids: string[]; finished: Rollout[] }> {
  const started = Date.now();
  const ids: string[] = [];
  const rate = values.rate ? Number(values.rate) : 0;
  await pool(items.map((i, k) => [i, k] as const), 16, async ([i, k]) => {
    if (rate > 0) await new Promise((r) => setTimeout(r, Math.max(0, started + (k * 1000) / rate - Date.now())));
    ids[k] = (await client.enqueueRollout({ i }, { mode: 'train' })).rollout_id;
  });
  return { ids, finished: await client.waitForAllRollouts(ids, 1200, { pollSec: 10 }) };
}

async function runLoad(name: string, url: string, storePid?: number): Promise<Result> {
  const client = new StoreClient(url, { timeoutMs: 60_000 });
  await client.addResources({ main_llm: { resource_type: 'proxy_llm', endpoint: 'http://127.0.0.1:9', model: 'bench', api_key: null, sampling_parameters: {} } });
  const calls = new Map<number, number>();
  const group = startRunners<{ i: number }>(RUNNERS, async (task) => {
    calls.set(task.i, (calls.get(task.i) ?? 0) + 1);
    return 1;
  }, { storeUrl: url, client, pollIntervalMs: 100, log: (l) => process.stderr.write(`[${name}] ${l}\n`) });
  // A warm-up, not measured, the same for both stores: start-up work (compiling, first connections) is not what
  // a store does per rollout.
  await enqueueAndWait(client, Array.from({ length: WARMUP }, (_, i) => -1 - i));
  const cpuBefore = cpuSeconds(storePid);
  const runnerBefore = process.cpuUsage();
  const started = Date.now();
  const { ids, finished } = await enqueueAndWait(client, [...Array(N).keys()]);
  const seconds = (Date.now() - started) / 1000;
  const storeCpuSec = cpuSeconds(storePid) - cpuBefore;
  const used = process.cpuUsage(runnerBefore);
  const runnerCpuSec = (used.user + used.system) / 1e6;
  await group.stop();

  // Lost: not succeeded. Duplicated: run more than once, more than one attempt, or more than one reward span.
  let duplicated = 0;
  for (const [i, count] of calls) if (i >= 0 && count > 1) duplicated++;
  await pool(ids, 16, async (id) => {
    const [attempts, spans] = await Promise.all([client.queryAttempts(id), client.querySpans(id, null)]);
    if (attempts.total !== 1 || spans.items.filter((s) => rewardOf(s) !== null).length !== 1) duplicated++;
  });
  const succeeded = finished.filter((r) => r.status === 'succeeded');
  const latencies = succeeded.map((r) => (r.end_time! - r.start_time) * 1000).sort((a, b) => a - b);
  return {
    store: name, rollouts: N, seconds, perSecond: N / seconds, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99),
    lost: N - succeeded.length, duplicated, storeCpuSec, runnerCpuSec,
  };
}

async function main(): Promise<void> {
  const results: Result[] = [];
  const procs: ManagedProcess[] = [];
  if (values.only !== 'python' && values.url) {
    results.push(await runLoad('ts (external)', values.url));
  } else if (values.only !== 'python') {
    const dir = mkdtempSync(path.join(tmpdir(), 'agl-store-bench-'));
    const ts = await startProcess({
      name: 'ts-store', command: process.execPath, args: ['--import', 'tsx', 'gateway/main.ts', '--port', '0', '--data', dir, '--sync', values.sync!],
      cwd: ROOT, readyLine: /listening on (http:\/\/\S+)/,
    });
    procs.push(ts);
    results.push(await runLoad(`ts (sqlite, sync=${values.sync})`, ts.match![1]!, ts.pid));
    await ts.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  if (values.only !== 'ts') {
    const venv = await aglVenv();
    const port = await freePort();
    const py = await startProcess({ name: 'agl-store', command: path.join(venv.binDir, 'agl'), args: ['store', '--host', '127.0.0.1', '--port', String(port), '--log-level', 'WARNING'], env: pythonEnv() });
    procs.push(py);
    await waitForHttp(`http://127.0.0.1:${port}/v1/agl/health`, 120_000);
    results.push(await runLoad('python agl store (memory)', `http://127.0.0.1:${port}`, py.pid));
    await py.stop();
  }
  console.log(`\n${N} rollouts (after ${WARMUP} not measured), ${RUNNERS} TS runners, trivial agent (reward 1.0), enqueued ${values.rate ? `at ${values.rate}/s` : 'all at once'}`);
  console.log('store                      | seconds | rollouts/s | p50 ms | p99 ms | lost | duplicated | store CPU s | store CPU ms/rollout | runners CPU s');
  for (const r of results) {
    console.log(`${r.store.padEnd(26)} | ${r.seconds.toFixed(1).padStart(7)} | ${r.perSecond.toFixed(1).padStart(10)} | ${r.p50.toFixed(0).padStart(6)} | ${r.p99.toFixed(0).padStart(6)} | ${String(r.lost).padStart(4)} | ${String(r.duplicated).padStart(10)} | ${r.storeCpuSec.toFixed(1).padStart(11)} | ${((r.storeCpuSec * 1000) / r.rollouts).toFixed(2).padStart(20)} | ${r.runnerCpuSec.toFixed(1)}`);
  }
  const [ts, py] = [results.find((r) => r.store.startsWith('ts')), results.find((r) => r.store.startsWith('python'))];
  const ratios = ts && py ? { throughput: ts.perSecond / py.perSecond, cpuPerRollout: ts.storeCpuSec / py.storeCpuSec } : null;
  if (ratios) console.log(`ours against agl 0.3: ${ratios.throughput.toFixed(1)}x the rollouts/s, ${ratios.cpuPerRollout.toFixed(3)}x the store CPU per rollout`);
  console.log(`load average during the run: ${loadAverage()}`);
  writeResult(process.argv.slice(2), { rollouts: N, warmup: WARMUP, runners: RUNNERS, results, ratios, load: loadAverage() });
  await stopAllProcesses();
  if (results.some((r) => r.lost > 0 || r.duplicated > 0)) process.exitCode = 1;
}

main().catch(async (err) => {
  console.error(err);
  await stopAllProcesses();
  process.exit(1);
});
