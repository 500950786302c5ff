// What the benchmarks share: starting the store and the bench proxy as processes, timing HTTP calls over
// keep-alive connections, CPU seconds of a process, quantiles, and the `--json FILE` result every bench can write
// for `npm run bench` (all.ts) to put into docs/benchmarks.md.
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startProcess, type ManagedProcess } from '../../common/processes';

export const ROOT = path.resolve(__dirname, '..', '..');

/** utime + stime of a process in seconds, from /proc (Linux); NaN when unknown. */
export function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks; 100 Hz on Linux
  } catch {
    return NaN;
  }
}

export const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
export const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

export function flag(args: string[], name: string, dflt: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
}

export function stringFlag(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

/** Writes the bench's result where `--json FILE` says (for all.ts); no flag, nothing written. */
export function writeResult(args: string[], result: unknown): void {
  const file = stringFlag(args, 'json');
  if (file) writeFileSync(file, JSON.stringify(result, null, 1));
}

export interface StoreProcess {
  url: string;
  proc: ManagedProcess;
  close(): Promise<void>;
}

/** The TS store as its own process, on a fresh database (sync full unless told). */
export async function startStoreProcess(sync: 'full' | 'normal' = 'full'): Promise<StoreProcess> {
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-bench-store-'));
  const proc = await startProcess({
    name: 'store', command: process.execPath, args: ['--import', 'tsx', 'gateway/main.ts', '--port', '0', '--data', dir, '--sync', sync],
    cwd: ROOT, readyLine: /store listening on (http:\/\/\S+)/, readyTimeoutMs: 60_000,
  });
  return {
    url: proc.match![1]!,
    proc,
    async close() {
      await proc.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The proxy with a zero-latency scripted sampler (proxy-bench-server.ts); spans go to `storeUrl` when given. */
export async function startBenchProxy(model: string, renderer: string, storeUrl?: string): Promise<{ port: number; proc: ManagedProcess }> {
  const proc = await startProcess({
    name: 'proxy', command: process.execPath, args: ['--import', 'tsx', 'test/bench/proxy-bench-server.ts', model, renderer, ...(storeUrl ? [storeUrl] : [])],
    cwd: ROOT, readyLine: /proxy listening on http:\/\/[^:]+:(\d+)/, readyTimeoutMs: 60_000,
  });
  return { port: Number(proc.match![1]), proc };
}

/** One POST; resolves with its latency in ms, or -1 for a non-200 answer. */
export function postOnce(agent: http.Agent, port: number, pathName: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.request({ host: '127.0.0.1', port, path: pathName, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200 ? Number(process.hrtime.bigint() - t0) / 1e6 : -1));
    });
    req.on('error', reject);
    req.end(body);
  });
}

export interface LoadResult {
  n: number;
  errors: number;
  rps: number;
  mean: number;
  p50: number;
  p99: number;
}

/** `clients` loops, each sending `calls` requests one after another (request i of client c from `next(c, i)`). */
export async function closedLoop(port: number, clients: number, calls: number, next: (client: number, call: number) => { path: string; body: string }): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const lat: number[] = [];
  let errors = 0;
  const t0 = Date.now();
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
    for (let i = 0; i < calls; i++) {
      const r = next(c, i);
      const ms = await postOnce(agent, port, r.path, r.body);
      if (ms < 0) errors++;
      else lat.push(ms);
    }
  }));
  const wall = (Date.now() - t0) / 1000;
  agent.destroy();
  lat.sort((a, b) => a - b);
  return { n: lat.length, errors, rps: lat.length / wall, mean: mean(lat), p50: quantile(lat, 0.5), p99: quantile(lat, 0.99) };
}

export const loadAverage = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
