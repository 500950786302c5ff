// The route training uses: rollout-scoped chat completions, each writing its span to a real store (its own
// process, sync=full), on a zero-latency sampler, so what is timed is the proxy's and the store's own cost.
//   1. one attempt, --calls (300) calls one after another, each a new turn of the same size: mean latency of the
//      first and the last 20 (a flat cost per call keeps them equal);
//   2. --clients (64) clients at once, each its own attempt of --turns (50) turns: requests per second.
// Not part of `npm test`; timings are reported, never asserted.
//   npm run bench -- proxy-scoped [--calls 300] [--clients 64] [--turns 50] [--json FILE]
import http from 'node:http';
import { fetchJson } from '../../common/http';
import { stopAllProcesses } from '../../common/processes';
import { closedLoop, flag, loadAverage, mean, postOnce, startBenchProxy, startStoreProcess, writeResult } from './bench-kit';

const args = process.argv.slice(2);
const CALLS = flag(args, 'calls', 300);
const CLIENTS = flag(args, 'clients', 64);
const TURNS = flag(args, 'turns', 50);
const MODEL = 'local/tiny-hello';

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
  const store = await startStoreProcess('full');
  const proxy = await startBenchProxy(MODEL, 'role_colon', store.url);
  try {
    // 1. One long attempt.
    const route = await newAttempt(store.url);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const latencies: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const ms = await postOnce(agent, proxy.port, route, turn(i));
      if (ms < 0) throw new Error(`call ${i + 1} of the attempt failed`);
      latencies.push(ms);
    }
    agent.destroy();
    const first = mean(latencies.slice(0, 20));
    const last = mean(latencies.slice(-20));
    console.log(`one attempt, ${CALLS} sequential calls: mean of calls 1-20 ${first.toFixed(1)} ms, of calls ${CALLS - 19}-${CALLS} ${last.toFixed(1)} ms (x${(last / first).toFixed(2)})`);

    // 2. Many agents at once.
    const routes = await Promise.all(Array.from({ length: CLIENTS }, () => newAttempt(store.url)));
    const load = await closedLoop(proxy.port, CLIENTS, TURNS, (c, i) => ({ path: routes[c]!, body: turn(i) }));
    console.log(`${CLIENTS} clients x ${TURNS} turns (own attempt each): ${load.rps.toFixed(1)} req/s, mean ${load.mean.toFixed(1)} ms, p99 ${load.p99.toFixed(1)} ms${load.errors ? `, ${load.errors} errors` : ''}`);
    console.log(`load average: ${loadAverage()}`);
    writeResult(args, { calls: CALLS, firstMs: first, lastMs: last, ratio: last / first, clients: CLIENTS, turns: TURNS, rps: load.rps, meanMs: load.mean, p99Ms: load.p99, errors: load.errors, load: loadAverage() });
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
