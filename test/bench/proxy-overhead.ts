// Proxy overhead per call on a zero-latency sampler (so latency = overhead), at 1, 64 and 256 concurrent
// clients: validation, rendering, tokenizing, parsing, JSON, HTTP; and for rollout-scoped calls also the
// store round trips (sequence id + span). Not part of `npm test`; timings are reported, never asserted.
//   npx tsx test/bench/proxy-overhead.ts [--requests N] [--seconds S]
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startProcess } from '../../common/processes';
import { fetchJson } from '../../common/http';

const ROOT = path.resolve(__dirname, '..', '..');
const args = process.argv.slice(2);
const flag = (name: string, d: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : d;
};
const SECONDS = flag('seconds', 4);
const MAX_REQUESTS = flag('requests', 20_000);

const MESSAGES = [
  { role: 'system', content: 'You are a helpful assistant that answers briefly.' },
  { role: 'user', content: 'Hello! Please say hello back, in one short sentence, and mention the weather in Zürich.' },
];

/** Latency in ms, or -1 for a non-200 answer (counted as an error). */
function postOnce(agent: http.Agent, port: number, pathName: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.request({ host: '127.0.0.1', port, path: pathName, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => {
        resolve(res.statusCode === 200 ? Number(process.hrtime.bigint() - t0) / 1e6 : -1);
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function load(port: number, concurrency: number, pathFor: (i: number) => string, body: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const lat: number[] = [];
  let issued = 0;
  let errors = 0;
  // Warm-up: open every connection first, so the rows measure calls, not TCP connection storms.
  await Promise.all(Array.from({ length: concurrency }, (_, i) => postOnce(agent, port, pathFor(i), body)));
  const t0 = Date.now();
  const deadline = t0 + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline && issued < MAX_REQUESTS) {
        const i = issued++;
        const ms = await postOnce(agent, port, pathFor(i), body);
        if (ms < 0) errors++;
        else lat.push(ms);
      }
    }),
  );
  const wall = (Date.now() - t0) / 1000;
  agent.destroy();
  lat.sort((a, b) => a - b);
  const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] ?? NaN;
  return { n: lat.length, errors, rps: lat.length / wall, mean: lat.reduce((a, b) => a + b, 0) / lat.length, p50: q(0.5), p95: q(0.95), p99: q(0.99) };
}

async function main() {
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-proxy-bench-'));
  const store = await startProcess({ name: 'store', command: process.execPath, args: ['--import', 'tsx', 'gateway/main.ts', '--port', '0', '--data', dir, '--sync', 'normal'], cwd: ROOT, readyLine: /store listening on (http:\/\/\S+)/, readyTimeoutMs: 60_000 });
  const storeUrl = store.match![1];
  const rows: string[] = [];
  try {
    for (const [model, renderer] of [['local/tiny-hello', 'role_colon'], ['Qwen/Qwen3-4B-Instruct-2507', 'qwen3_instruct']]) {
      const proxy = await startProcess({ name: 'proxy', command: process.execPath, args: ['--import', 'tsx', 'test/bench/proxy-bench-server.ts', model, renderer, storeUrl], cwd: ROOT, readyLine: /proxy listening on http:\/\/[^:]+:(\d+)/, readyTimeoutMs: 60_000 });
      const port = Number(proxy.match![1]);
      try {
        for (const scoped of [false, true]) {
          for (const c of [1, 64, 256]) {
            let pathFor = (_i: number) => '/v1/chat/completions';
            if (scoped) {
              const ids: string[][] = [];
              for (let k = 0; k < 16; k++) {
                const r = await fetchJson<any>(`${storeUrl}/v1/agl/rollouts`, { body: { input: {} } });
                ids.push([r.rollout_id, r.attempt.attempt_id]);
              }
              pathFor = (i) => `/rollout/${ids[i % 16][0]}/attempt/${ids[i % 16][1]}/v1/chat/completions`;
            }
            const body = JSON.stringify({ model, messages: MESSAGES, max_tokens: 256 });
            const r = await load(port, c, pathFor, body);
            const line = `${model.padEnd(28)} ${(scoped ? 'scoped+span' : 'plain').padEnd(12)} c=${String(c).padEnd(4)} n=${String(r.n).padEnd(6)}${r.errors ? ` errors=${r.errors}` : ''} ${r.rps.toFixed(0).padStart(6)} req/s  mean ${r.mean.toFixed(2)} ms  p50 ${r.p50.toFixed(2)}  p95 ${r.p95.toFixed(2)}  p99 ${r.p99.toFixed(2)}`;
            rows.push(line);
            process.stdout.write(line + '\n');
          }
        }
      } finally {
        await proxy.stop();
      }
    }
  } finally {
    await store.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(`\nproxy overhead per call (zero-latency sampler; latency = overhead), ${SECONDS}s per row, node ${process.version}, 2 cores:\n${rows.join('\n')}\n`);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
