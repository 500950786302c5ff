// Agent-lightning v0.3.0's own store benchmark (tests/benchmark/benchmark_store.py, vendored unchanged under
// agl-harness/ with its licence) against our store and against `agl store` (v0.3.0, in memory), one after the
// other with the same arguments. Its Python runners (n processes, OTel spans with random nested attributes,
// rewards) talk to the store through agl's own client. Reported per store: rollouts/s between the first rollout's
// start and the last one's end (the store's own timestamps, so runner start-up is left out), the store's CPU
// seconds per rollout, and its CPU use over that window (near 100% of a core: the store is the limit).
//   npm run bench -- agl-harness [--tasks 2048] [--runners 32] [--rounds 6] [--sleep 0.001] [--only ts|python] [--json FILE]
import { spawn } from 'node:child_process';
import path from 'node:path';
import { waitForHttp } from '../../common/http';
import { freePort } from '../../common/ports';
import { startProcess, stopAllProcesses } from '../../common/processes';
import { StoreClient } from '../../store/client';
import { aglVenv, pythonEnv } from '../interop/store-python';
import { cpuSeconds, flag, loadAverage, startStoreProcess, stringFlag, writeResult } from './bench-kit';

const args = process.argv.slice(2);
const TASKS = flag(args, 'tasks', 2048);
const RUNNERS = flag(args, 'runners', 32);
const ROUNDS = flag(args, 'rounds', 6);
const SLEEP = flag(args, 'sleep', 0.001);
const ONLY = stringFlag(args, 'only');
const HARNESS = path.join(__dirname, 'agl-harness');

export interface HarnessResult {
  store: string;
  rollouts: number;
  seconds: number;
  perSecond: number;
  storeCpuSec: number;
  cpuMsPerRollout: number;
  /** Store CPU seconds per second of the window: 1.0 = one core busy all along. */
  storeBusy: number;
  harnessSeconds: number;
}

function runHarness(python: string, storeUrl: string): Promise<void> {
  const argv = ['-m', 'tests.benchmark.benchmark_store', '--store-url', storeUrl, '--mode', 'batch', '--total-tasks', String(TASKS),
    '--batch-size', String(TASKS), '--n-runners', String(RUNNERS), '--max-rounds', String(ROUNDS), '--sleep-seconds', String(SLEEP)];
  return new Promise((resolve, reject) => {
    const child = spawn(python, argv, { cwd: HARNESS, env: pythonEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
    let tail = '';
    child.stderr.on('data', (d: Buffer) => { tail = (tail + d.toString()).slice(-4000); });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`benchmark_store.py exited ${code}:\n${tail}`))));
  });
}

async function measure(name: string, storeUrl: string, pid: number, python: string): Promise<HarnessResult> {
  const cpu0 = cpuSeconds(pid);
  const t0 = Date.now();
  await runHarness(python, storeUrl);
  const harnessSeconds = (Date.now() - t0) / 1000;
  const storeCpuSec = cpuSeconds(pid) - cpu0;
  const page = await new StoreClient(storeUrl, { timeoutMs: 120_000 }).queryRollouts({});
  const done = page.items.filter((r) => r.status === 'succeeded');
  if (done.length !== TASKS) throw new Error(`${name}: ${done.length} of ${TASKS} rollouts succeeded`);
  const seconds = Math.max(...done.map((r) => r.end_time!)) - Math.min(...done.map((r) => r.start_time));
  const r = { store: name, rollouts: TASKS, seconds, perSecond: TASKS / seconds, storeCpuSec, cpuMsPerRollout: (storeCpuSec * 1000) / TASKS, storeBusy: storeCpuSec / seconds, harnessSeconds };
  console.log(`${name.padEnd(26)} ${r.perSecond.toFixed(1).padStart(7)} rollouts/s  store CPU ${r.cpuMsPerRollout.toFixed(2)} ms/rollout, busy ${(100 * r.storeBusy).toFixed(0)}% of a core (harness ${harnessSeconds.toFixed(0)} s)`);
  return r;
}

async function main(): Promise<void> {
  const venv = await aglVenv();
  const results: HarnessResult[] = [];
  console.log(`benchmark_store.py (agl v0.3.0): --mode batch --total-tasks ${TASKS} --batch-size ${TASKS} --n-runners ${RUNNERS} --max-rounds ${ROUNDS} --sleep-seconds ${SLEEP}`);
  if (ONLY !== 'python') {
    const ts = await startStoreProcess('full');
    try {
      results.push(await measure('ts (sqlite, sync=full)', ts.url, ts.proc.pid, venv.python));
    } finally {
      await ts.close();
    }
  }
  if (ONLY !== 'ts') {
    const port = await freePort();
    const py = await startProcess({ name: 'agl-store', command: path.join(venv.binDir, 'agl'), args: ['store', '--host', '127.0.0.1', '--port', String(port), '--log-level', 'WARNING'], env: pythonEnv() });
    try {
      await waitForHttp(`http://127.0.0.1:${port}/v1/agl/health`, 120_000);
      results.push(await measure('python agl store (memory)', `http://127.0.0.1:${port}`, py.pid, venv.python));
    } finally {
      await py.stop();
    }
  }
  console.log(`load average: ${loadAverage()}`);
  writeResult(args, { tasks: TASKS, runners: RUNNERS, rounds: ROUNDS, sleep: SLEEP, results, load: loadAverage() });
  await stopAllProcesses();
}

main().catch(async (err) => {
  console.error(err);
  await stopAllProcesses();
  process.exit(1);
});
