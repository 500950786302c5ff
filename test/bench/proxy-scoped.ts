// The route training uses: rollout-scoped chat completions, each writing its span to a real store (its own
// process, sync=full), on a zero-latency sampler, so what is timed is the proxy's and the store's own cost.
//   1. one attempt, --calls (300) calls one after another, each a new turn of the same size: mean latency of the
//      first and the last 20 (a flat cost per call keeps them equal); beside each scoped call, the same turn on the
//      unscoped route of the same proxy (no span, no store), alternating, so both arms run under the same load:
//      calls per second of each and their ratio (the target: scoped >= 0.8 of unscoped);
//   2. --clients (64) clients at once, each its own attempt of --turns (50) turns: requests per second; then the
//      same load on the unscoped route.
// --sync normal: the store without its fsync before answering a write (what the fsync costs is the difference).
// Not part of `npm test`; timings are reported, never asserted.
//   npm run bench -- proxy-scoped [--calls 300] [--clients 64] [--turns 50] [--sync full|normal] [--json FILE]
import http from 'node:http';
import { fetchJson } from '../../common/http';
import { stopAllProcesses } from '../../common/processes';
import { closedLoop, flag, loadAverage, mean, postOnce, startBenchProxy, startStoreProcess, stringFlag, writeResult } from './bench-kit';

const args = process.argv.slice(2);
const CALLS = flag(args, 'calls', 300);
const CLIENTS = flag(args, 'clients', 64);
const TURNS = flag(args, 'turns', 50);
const MODEL = 'local/tiny-hello';
const UNSCOPED = '/v1/chat/completions';
const SYNC = (stringFlag(args, 'sync') ?? 'full') as 'full' | 'normal';
if (SYNC !== 'full' && SYNC !== 'normal') throw new Error(`--sync must be full or normal, got ${SYNC}`);

/** Turn `i` of an agent: every turn asks something new, in a request of the same size. */
function turn(i: number): string {
  return JSON.stringify({
    model: MODEL,
    max_tokens: 64,
    messages: [
      { role: 'system', content: 'You are a helpful assistant that answers briefly.' },
      { role: 'user', content: `Turn ${String(i).padStart(5, '0')}: say hello back, in one short sentence.` },
    ],
  });
}

async function newAttempt(storeUrl: string): Promise<string> {
  const r = await fetchJson<{ rollout_id: string; attempt: { attempt_id: string } }>(`${storeUrl}/v1/agl/rollouts`, { body: { input: {} } });
  return `/rollout/${r.rollout_id}/attempt/${r.attempt.attempt_id}/v1/chat/completions`;
}

async function main(): Promise<void> {
  const store = await startStoreProcess(SYNC);
  console.log(`store sync=${SYNC}; load average at the start: ${loadAverage()}`);
  const proxy = await startBenchProxy(MODEL, 'role_colon', store.url);
  try {
    // 1. One long attempt.
    const route = await newAttempt(store.url);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    // A warm-up on the unscoped route (JIT, sockets); the attempt's calls are all timed.
    for (let i = 0; i < 20; i++) await postOnce(agent, proxy.port, UNSCOPED, turn(100_000 + i));
    const latencies: number[] = [];
    const plain: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const ms = await postOnce(agent, proxy.port, route, turn(i));
      if (ms < 0) throw new Error(`call ${i + 1} of the attempt failed`);
      latencies.push(ms);
      const un = await postOnce(agent, proxy.port, UNSCOPED, turn(i));
      if (un < 0) throw new Error(`unscoped call ${i + 1} failed`);
      plain.push(un);
    }
    agent.destroy();
    const first = mean(latencies.slice(0, 20));
    const last = mean(latencies.slice(-20));
    const scopedPerS = 1000 / mean(latencies);
    const unscopedPerS = 1000 / mean(plain);
    console.log(`one attempt, ${CALLS} sequential calls: mean of calls 1-20 ${first.toFixed(1)} ms, of calls ${CALLS - 19}-${CALLS} ${last.toFixed(1)} ms (x${(last / first).toFixed(2)})`);
    console.log(`  scoped ${scopedPerS.toFixed(0)} calls/s (mean ${mean(latencies).toFixed(2)} ms), unscoped beside it ${unscopedPerS.toFixed(0)} calls/s (mean ${mean(plain).toFixed(2)} ms): scoped / unscoped ${(scopedPerS / unscopedPerS).toFixed(2)}`);

    // 2. Many agents at once.
    const routes = await Promise.all(Array.from({ length: CLIENTS }, () => newAttempt(store.url)));
    const load = await closedLoop(proxy.port, CLIENTS, TURNS, (c, i) => ({ path: routes[c]!, body: turn(i) }));
    console.log(`${CLIENTS} clients x ${TURNS} turns (own attempt each): ${load.rps.toFixed(1)} req/s, mean ${load.mean.toFixed(1)} ms, p99 ${load.p99.toFixed(1)} ms${load.errors ? `, ${load.errors} errors` : ''}`);
    const unLoad = await closedLoop(proxy.port, CLIENTS, TURNS, (_c, i) => ({ path: UNSCOPED, body: turn(i) }));
    console.log(`${CLIENTS} clients x ${TURNS} turns, unscoped: ${unLoad.rps.toFixed(1)} req/s, mean ${unLoad.mean.toFixed(1)} ms, p99 ${unLoad.p99.toFixed(1)} ms${unLoad.errors ? `, ${unLoad.errors} errors` : ''} (scoped / unscoped ${(load.rps / unLoad.rps).toFixed(2)})`);
    console.log(`load average: ${loadAverage()}`);
    writeResult(args, {
      sync: SYNC, calls: CALLS, firstMs: first, lastMs: last, ratio: last / first, scopedPerS, unscopedPerS, sequentialRatio: scopedPerS / unscopedPerS,
      clients: CLIENTS, turns: TURNS, rps: load.rps, meanMs: load.mean, p99Ms: load.p99, errors: load.errors, unscopedRps: unLoad.rps, load: loadAverage(),
    });
  } finally {
    await proxy.proc.stop();
    await store.close();
    await stopAllProcesses();
  }
}

main().catch(async (err) => {
  console.error(err);
  await stopAllProcesses();
  process.exit(1);
});
