// What orchestration costs in a real run: the hello example (16 tasks x 4 rollouts a batch, 8 runners, the local
// trainer) for --batches batches on a whole stack (Temporal dev server, store, trainer, proxy, worker, runners),
// then, from the run's history, each batch's wall time (its publishPolicy scheduled to its logMetrics completed)
// against the time its activities ran (started to completed). The rest, scheduling, dispatch and workflow tasks,
// is orchestration.
//   npm run bench -- orchestration [--batches 6] [--json FILE]
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { startOrAttach } from '../../cli/run-commands';
import { validateRunConfig } from '../../config/load';
import { EXAMPLES } from '../../dev/examples';
import { startStack, type Stack } from '../../dev/stack';
import { stopAllProcesses } from '../../common/processes';
import { flag, loadAverage, mean, writeResult } from './bench-kit';

type Event = temporal.api.history.v1.IHistoryEvent;
const args = process.argv.slice(2);
const BATCHES = flag(args, 'batches', 6);
const ms = (e: Event) => Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6;

interface BatchCost { wallMs: number; activityMs: number; overheadMs: number }

/** Per batch (train publishPolicy scheduled → logMetrics completed): wall time and the time activities ran in it. */
function batchCosts(events: Event[]): BatchCost[] {
  const scheduled = new Map<number, { name: string; at: number }>();
  const started = new Map<number, number>();
  const ran: { name: string; from: number; to: number; scheduledAt: number }[] = [];
  for (const e of events) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s) scheduled.set(Number(e.eventId), { name: s.activityType?.name ?? '', at: ms(e) });
    const st = e.activityTaskStartedEventAttributes;
    if (st) started.set(Number(st.scheduledEventId), ms(e));
    const done = e.activityTaskCompletedEventAttributes;
    if (done) {
      const id = Number(done.scheduledEventId);
      ran.push({ name: scheduled.get(id)?.name ?? '', from: started.get(id)!, to: ms(e), scheduledAt: scheduled.get(id)?.at ?? NaN });
    }
  }
  // A batch opens with publishPolicy (train; an eval one precedes it in evaluated batches) and ends with logMetrics.
  const out: BatchCost[] = [];
  let open: number | null = null;
  let activity = 0;
  for (const r of ran) {
    if (open === null && r.name === 'publishPolicy') open = r.scheduledAt;
    if (open === null) continue;
    activity += r.to - r.from;
    if (r.name === 'logMetrics') {
      const wallMs = r.to - open;
      out.push({ wallMs, activityMs: activity, overheadMs: wallMs - activity });
      open = null;
      activity = 0;
    }
  }
  return out;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'agl-orchestration-'));
  const taskQueue = `bench-orchestration-${randomUUID()}`;
  let stack: Stack | undefined;
  let connection: Connection | undefined;
  try {
    stack = await startStack({
      dataDir, ports: { temporal: 0, ui: 0, store: 0, trainer: 0, proxy: 0 }, taskQueue,
      initialModel: 'local/tiny-hello', renderer: 'role_colon', agent: 'hello', runners: 8, log: () => {},
    });
    connection = await Connection.connect({ address: stack.temporal.address, connectTimeout: '60 seconds' });
    const client = new Client({ connection });
    const base = EXAMPLES.hello!.config({ storeUrl: stack.storeUrl, trainerUrl: stack.trainerUrl, proxyPort: stack.proxyPort, logPath: path.join(dataDir, 'runs', 'hello') });
    const cfg = validateRunConfig({ ...base, runName: `orchestration-${taskQueue.slice(-8)}`, datasetBuilder: { ...base.datasetBuilder, trainDataset: (base.datasetBuilder.trainDataset ?? []).slice(0, 16 * BATCHES) } });
    const run = await startOrAttach(client, taskQueue, cfg, { fresh: true });
    await run.handle.result();
    const { events } = await run.handle.fetchHistory();
    const costs = batchCosts(events ?? []);
    for (const [i, c] of costs.entries()) console.log(`batch ${i}: ${(c.wallMs / 1000).toFixed(2)} s, activities ${(c.activityMs / 1000).toFixed(2)} s, orchestration ${c.overheadMs.toFixed(0)} ms (${((100 * c.overheadMs) / c.wallMs).toFixed(1)}%)`);
    const share = costs.map((c) => c.overheadMs / c.wallMs);
    const result = { batches: costs.length, meanWallS: mean(costs.map((c) => c.wallMs)) / 1000, meanOverheadMs: mean(costs.map((c) => c.overheadMs)), minShare: Math.min(...share), maxShare: Math.max(...share), meanShare: mean(share), load: loadAverage() };
    console.log(`orchestration: mean ${result.meanOverheadMs.toFixed(0)} ms of a ${result.meanWallS.toFixed(2)} s batch (${(100 * result.minShare).toFixed(1)}–${(100 * result.maxShare).toFixed(1)}%, mean ${(100 * result.meanShare).toFixed(1)}%); load average ${result.load}`);
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
