// A long run at the cheapest settings, to see what grows with its length: the smallest model
// (local/tiny-test), one task of two rollouts a step, the trivial hello agent, no evaluation, on a whole stack
// (Temporal dev server, store, trainer, proxy, worker, runners). Reported at steps 100, every 1,000 and N: each
// process's resident memory (as it is, and with --gc also after a full garbage collection, gc-probe.ts), the
// store's database (with its pages split into the runs' log, the rest, and free), the run's directory and the trainer's data; from Temporal's
// history afterwards, per window of 100 steps (100-199, 900-999, the last 100) the median orchestration time
// (a step's wall time, its publishPolicy scheduled to its logMetrics completed, minus the time its activities
// ran) and logMetrics time, and the history size of each continue-as-new segment.
//   npm run bench -- soak [--steps 10000] [--retain 100] [--gc] [--json FILE]
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { startOrAttach } from '../../cli/run-commands';
import { validateRunConfig } from '../../config/load';
import { startStack, type Stack } from '../../dev/stack';
import { stopAllProcesses } from '../../common/processes';
import { BATCH } from '../../shared/search-attributes';
import { flag, loadAverage, quantile, writeResult } from './bench-kit';
import { memoryAfterGc, type AfterGc } from './gc-probe';

type Event = temporal.api.history.v1.IHistoryEvent;
const args = process.argv.slice(2);
const STEPS = flag(args, 'steps', 10_000);
const RETAIN = flag(args, 'retain', 100);
const GC = args.includes('--gc');
// Every 1,000 steps too, so a long soak shows the trend of each process's memory, not only its ends.
const MARKS = [100, ...Array.from({ length: Math.floor(STEPS / 1000) }, (_, i) => (i + 1) * 1000), STEPS].filter((m, i, a) => m <= STEPS && a.indexOf(m) === i);
const ms = (e: Event) => Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6;
const mib = (b: number) => +(b / 2 ** 20).toFixed(2);

function rssBytes(pid: number | undefined): number {
  if (!pid) return NaN;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

function duBytes(p: string): number {
  let total = 0;
  let st;
  try {
    st = statSync(p);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.size;
  let names: string[];
  try {
    names = readdirSync(p);
  } catch {
    return 0; // gone since the stat (a lock directory released meanwhile)
  }
  for (const name of names) total += duBytes(path.join(p, name));
  return total;
}

/**
 * The store database's pages by what they hold: the runs' log (run_records with its indexes: metrics, checkpoint,
 * trace rows, kept whatever the retention), everything else (what retention bounds), and free pages.
 */
function storeBreakdown(dbFile: string): { logMiB: number; restMiB: number; freeMiB: number } | string {
  try {
    const db = new Database(dbFile, { readonly: true, fileMustExist: true });
    try {
      const rows = db.prepare(`SELECT COALESCE(m.tbl_name, d.name) AS tbl, SUM(d.pgsize) AS bytes
        FROM dbstat d LEFT JOIN sqlite_schema m ON m.name = d.name GROUP BY tbl`).all() as { tbl: string; bytes: number }[];
      const log = rows.filter((r) => r.tbl === 'run_records').reduce((a, r) => a + r.bytes, 0);
      const all = rows.reduce((a, r) => a + r.bytes, 0);
      const free = Number(db.pragma('freelist_count', { simple: true })) * Number(db.pragma('page_size', { simple: true }));
      return { logMiB: mib(log), restMiB: mib(all - log), freeMiB: mib(free) };
    } finally {
      db.close();
    }
  } catch (err) {
    return `unreadable: ${(err as Error).message}`;
  }
}

/** Each Node service's memory after a full GC, one at a time (they share the inspector's port). */
async function afterGcOf(pids: Record<string, number | undefined>): Promise<Record<string, AfterGc | string>> {
  const out: Record<string, AfterGc | string> = {};
  for (const [name, pid] of Object.entries(pids)) {
    if (!pid) continue;
    out[name] = await memoryAfterGc(pid).catch((err: Error) => `not measured: ${err.message}`);
  }
  return out;
}

interface StepCost { orchestrationMs: number; logMetricsMs: number }

/** Per step (publishPolicy scheduled → logMetrics completed): wall time minus the time activities ran, and logMetrics. */
function stepCosts(events: Event[]): StepCost[] {
  const scheduled = new Map<number, { name: string; at: number }>();
  const started = new Map<number, number>();
  const out: StepCost[] = [];
  let open: number | null = null;
  let activity = 0;
  for (const e of events) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s) scheduled.set(Number(e.eventId), { name: s.activityType?.name ?? '', at: ms(e) });
    const st = e.activityTaskStartedEventAttributes;
    if (st) started.set(Number(st.scheduledEventId), ms(e));
    const done = e.activityTaskCompletedEventAttributes;
    if (!done) continue;
    const id = Number(done.scheduledEventId);
    const a = scheduled.get(id);
    if (!a) continue;
    if (open === null && a.name === 'publishPolicy') open = a.at;
    if (open === null) continue;
    const ran = ms(e) - (started.get(id) ?? a.at);
    activity += ran;
    if (a.name === 'logMetrics') {
      out.push({ orchestrationMs: ms(e) - open - activity, logMetricsMs: ran });
      open = null;
      activity = 0;
    }
  }
  return out;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(process.env.AGL_TEST_SCRATCH ?? os.tmpdir(), 'agl-soak-'));
  const taskQueue = `bench-soak-${randomUUID()}`;
  let stack: Stack | undefined;
  let connection: Connection | undefined;
  try {
    stack = await startStack({
      dataDir, ports: { temporal: 0, ui: 0, store: 0, trainer: 0, proxy: 0 }, taskQueue, persistTemporal: true,
      initialModel: 'local/tiny-test', renderer: 'role_colon', agent: 'hello', runners: 2, log: () => {},
    });
    connection = await Connection.connect({ address: stack.temporal.address, connectTimeout: '60 seconds' });
    const client = new Client({ connection });
    const logPath = path.join(dataDir, 'runs', 'soak');
    const cfg = validateRunConfig({
      runName: 'soak', learningRate: 3e-3, modelName: 'local/tiny-test', rendererName: 'role_colon', baseUrl: stack.trainerUrl,
      storeAddress: stack.storeUrl, llmProxyPort: stack.proxyPort, logPath, maxTokens: 8, evalEvery: 0, saveEvery: 500, retainSteps: RETAIN,
      // A validation set of its own: without one the seed splits 30 % of the training set off (a 10,000-step soak ran 7,000).
      datasetBuilder: { batchSize: 1, groupSize: 2, trainDataset: Array.from({ length: STEPS }, (_, i) => String(i + 1)), valDataset: ['0'] },
    });
    const run = await startOrAttach(client, taskQueue, cfg, { fresh: true });
    const h = client.workflow.getHandle(run.workflowId);
    const samples: Record<string, unknown>[] = [];
    const t0 = Date.now();
    for (const mark of MARKS) {
      for (;;) {
        const d = await h.describe().catch(() => null);
        if (d && d.status.name !== 'RUNNING') break;
        if ((d?.typedSearchAttributes.get(BATCH) ?? 0) >= mark) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      const s = stack.services;
      const sample = {
        step: mark, minutes: +((Date.now() - t0) / 60_000).toFixed(1),
        rssMiB: {
          temporal: mib(rssBytes(stack.temporal.process?.pid)), store: mib(rssBytes(s.store.process?.pid)), trainer: mib(rssBytes(s.trainer.process?.pid)),
          proxy: mib(rssBytes(s.proxy.process?.pid)), worker: mib(rssBytes(s.worker.process?.pid)), runners: mib(rssBytes(s.runners.process?.pid)),
        },
        storeDbMiB: mib(duBytes(path.join(dataDir, 'store'))), storePages: storeBreakdown(path.join(dataDir, 'store', 'store.sqlite')), runDirMiB: mib(duBytes(logPath)), trainerDataMiB: mib(duBytes(path.join(dataDir, 'trainer'))),
        ...(GC ? { afterGc: await afterGcOf({ store: s.store.process?.pid, trainer: s.trainer.process?.pid, proxy: s.proxy.process?.pid, worker: s.worker.process?.pid, runners: s.runners.process?.pid }) } : {}),
      };
      samples.push(sample);
      console.log(JSON.stringify(sample));
    }
    await h.result();
    // Every execution of the chain, oldest first: its history bytes and the steps it ran.
    const segments: { runId: string; events: number; bytes: number; steps: number }[] = [];
    const costs: StepCost[] = [];
    // Walk the chain back from its last execution (each names the one it continued), then oldest first.
    const chain: { runId: string; history: temporal.api.history.v1.IHistory }[] = [];
    for (let runId: string | undefined = (await h.describe()).runId; runId; ) {
      const history = await client.workflow.getHandle(run.workflowId, runId).fetchHistory();
      chain.unshift({ runId, history });
      runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
    }
    for (const { runId, history } of chain) {
      const c = stepCosts(history.events ?? []);
      costs.push(...c);
      segments.push({ runId, events: history.events?.length ?? 0, bytes: temporal.api.history.v1.History.encode(history).finish().length, steps: c.length });
    }
    const windowOf = (from: number) => {
      const w = costs.slice(from, from + 100);
      const med = (xs: number[]) => +quantile([...xs].sort((a, b) => a - b), 0.5).toFixed(1);
      return { steps: `${from}-${from + w.length - 1}`, orchestrationMedianMs: med(w.map((c) => c.orchestrationMs)), logMetricsMedianMs: med(w.map((c) => c.logMetricsMs)) };
    };
    const windows = [100, 900, costs.length - 100].filter((f, i, a) => f >= 0 && f + 100 <= costs.length && a.indexOf(f) === i).map(windowOf);
    const result = { steps: STEPS, retainSteps: RETAIN, stepsMeasured: costs.length, windows, samples, segments: segments.map(({ runId: _r, ...s }) => s), load: loadAverage() };
    console.log(`soak over ${STEPS} steps (retainSteps ${RETAIN}; load average ${result.load}):`);
    for (const w of windows) console.log(`  steps ${w.steps}: orchestration median ${w.orchestrationMedianMs} ms, logMetrics median ${w.logMetricsMedianMs} ms`);
    for (const s of segments) console.log(`  history segment: ${s.steps} steps, ${s.events} events, ${(s.bytes / 1024).toFixed(0)} KiB`);
    writeResult(args, result);
  } finally {
    await connection?.close();
    await stack?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    await stopAllProcesses();
  }
}

main().catch(async (err) => {
  console.error(err);
  await stopAllProcesses();
  process.exit(1);
});
