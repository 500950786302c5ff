// Run inside the hub's namespace by several-hosts.test.ts (the test's own namespace has no route to the hosts):
// `node --import tsx run-from-hub.ts <config.json> <trainer data dir>` starts the run as `client start` does,
// prints `PROGRESS <batch> <phase>` whenever the run's search attributes change, `HOLDING <worker id>` for each
// runner seen holding a running attempt of the run (so a fault can wait for a host to hold work), and at the end
// `OUTCOME <json>`:
// the run's final weights and per-step weights (read from the trainer's files), its metrics and checkpoint rows
// (exported from the store into a fresh directory), its step records and every rollout's attempts (from the store).
// Temporal: TEMPORAL_ADDRESS; the store's token: AGL_STORE_TOKEN.
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { startOrAttach } from '../../cli/run-commands';
import { exportCommand } from '../../cli/export-command';
import { validateRunConfig } from '../../config/load';
import { StoreClient } from '../../store/client';
import { BATCH, PHASE } from '../../shared/search-attributes';
import type { trainingRun } from '../../workflows/training-run';
import { outcomeOf } from '../chaos/harness';
import { stepRecordsOf } from '../helpers/run-records';

/** Prints `HOLDING <worker id>` the first time each runner is seen holding a running attempt of the run. Polled
 * every 50 ms, apart from the slower describe loop: a hello rollout is held for a fraction of a second. */
async function watchHolders(store: StoreClient, runName: string, going: () => boolean): Promise<void> {
  const seen = new Set<string>();
  while (going()) {
    // The store may be down (the test restarts it): a missed poll only delays a HOLDING line.
    const page = await store.queryRollouts({ status_in: ['running'], idempotency_key_prefix: `${runName}@`, limit: 100 }, { timeoutMs: 2000 }).catch(() => null);
    for (const r of page?.items ?? []) {
      const worker = 'attempt' in r ? r.attempt.worker_id : null;
      if (worker && !seen.has(worker)) {
        seen.add(worker);
        process.stdout.write(`HOLDING ${worker}\n`);
      }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function main(): Promise<void> {
  const [configFile, trainerDir] = process.argv.slice(2);
  const cfg = validateRunConfig(JSON.parse(readFileSync(configFile!, 'utf8')));
  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS!, connectTimeout: '60 seconds' });
  const client = new Client({ connection });
  const run = await startOrAttach(client, process.env.AGL_TASK_QUEUE ?? 'agl-training', cfg);
  const handle: WorkflowHandle<typeof trainingRun> = client.workflow.getHandle(run.workflowId);
  let last = '';
  let running = true;
  const watching = watchHolders(new StoreClient(cfg.storeAddress ?? process.env.AGL_STORE_URL!), cfg.runName!, () => running);
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    const d = await handle.describe().catch(() => null);
    if (d) {
      const now = `${d.typedSearchAttributes.get(BATCH) ?? 0} ${d.typedSearchAttributes.get(PHASE) ?? 'starting'}`;
      if (now !== last) process.stdout.write(`PROGRESS ${now}\n`);
      last = now;
      if (d.status.name !== 'RUNNING') break;
    }

    if (Date.now() > deadline) throw new Error(`run ${cfg.runName} still running after 10 min`);
    await new Promise((r) => setTimeout(r, 250));
  }
  running = false;
  await watching;
  const result = await handle.result();
  const storeUrl = cfg.storeAddress ?? process.env.AGL_STORE_URL!;
  const dir = await exportCommand(cfg.runName!, mkdtempSync(path.join(os.tmpdir(), 'agl-w22h-export-')), storeUrl);
  // The run's instance (`<runName>@<first run id>`): the records the workflow wrote.
  const instances = [...new Set((await new StoreClient(storeUrl).runsWithRecords()).map((r) => r.run).filter((r) => r.startsWith(`${cfg.runName!}@`)))];
  if (instances.length !== 1) throw new Error(`run ${cfg.runName}: ${instances.length} instances in the store (${instances.join(', ')})`);
  const outcome = await outcomeOf(trainerDir!, storeUrl, instances[0]!, dir, result.batchesCompleted);
  const steps = (await stepRecordsOf(storeUrl, instances[0]!)).map((r) => r.result.state.step);
  // Every rollout of this run and its attempts, as the store has them.
  const store = new StoreClient(storeUrl);
  const rollouts = (await store.queryRollouts({ limit: 10_000 })).items.filter((r) => (r.metadata as Record<string, unknown> | null)?.agl_run === cfg.runName!);
  const attempts = [];
  for (const r of rollouts) {
    const as = (await store.queryAttempts(r.rollout_id, { limit: 100 })).items;
    attempts.push({ rollout: r.rollout_id, status: r.status, attempts: as.map((a) => ({ worker: a.worker_id, status: a.status })) });
  }
  process.stdout.write(`OUTCOME ${JSON.stringify({ result, outcome, steps, attempts })}\n`);
  await connection.close();
}

main().catch((err: Error) => {
  process.stderr.write(`run-from-hub: ${err.stack ?? err.message}\n`);
  process.exit(1);
});
