// A run whose store lives on a 2 MiB volume that is filled for a minute in the middle of the run, against
// the same run without the fill. Not part of `npm test` (it takes two minutes, most of it the
// minute of full disk; test/store/full-disk.test.ts and the chaos suite's full-disk faults are): run it with
//   npx tsx test/chaos/full-disk-run.ts [--fill-seconds 60]
// as root (it mounts a tmpfs). Prints what happened and whether the run ended with the weights it gets without.
import { mkdtempSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { startStack } from '../../dev/stack';
import { validateRunConfig } from '../../config/load';
import { startOrAttach } from '../../cli/run-commands';
import type { trainingRun } from '../../workflows/training-run';
import { mountSmallVolume, smallVolumeUnavailable } from '../helpers/small-volume';
import { injectAt, outcomeOf } from './harness';

const at = process.argv.indexOf('--fill-seconds');
const fillSeconds = at >= 0 ? Number(process.argv[at + 1]) : 60;
if (!(fillSeconds > 0)) throw new Error(`--fill-seconds must be a positive number, got ${process.argv[at + 1]}`);
const log = (line: string) => process.stdout.write(`[full-disk-run] ${line}\n`);

async function main(): Promise<void> {
  const why = smallVolumeUnavailable();
  if (why) throw new Error(why);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'agl-full-disk-run-'));
  const volume = mountSmallVolume(2 * 1024 * 1024, { at: path.join(dataDir, 'store') });
  const taskQueue = `full-disk-${randomUUID()}`;
  const stack = await startStack({
    dataDir, ports: { temporal: 0, ui: 0, store: 0, trainer: 0, proxy: 0 }, taskQueue,
    initialModel: 'local/tiny-test', renderer: 'role_colon', agent: 'hello-dense', runners: 4, log: (l) => log(`stack: ${l}`),
  });
  const client = new Client({ connection: await Connection.connect({ address: stack.temporal.address }) });
  const config = (runName: string) => validateRunConfig({
    runName, learningRate: 3e-3, modelName: 'local/tiny-test', rendererName: 'role_colon', baseUrl: stack.trainerUrl,
    storeAddress: stack.storeUrl, llmProxyPort: stack.proxyPort, logPath: path.join(dataDir, 'runs', runName), maxTokens: 24,
    evalEvery: 2, saveEvery: 2, rolloutTimeoutSeconds: 600, rolloutUnresponsiveSeconds: 30, rolloutMaxAttempts: 6, activityHeartbeatTimeoutSeconds: 10,
    datasetBuilder: { batchSize: 4, groupSize: 2, trainDataset: ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12'], valDataset: ['500', '501'] },
  });
  const run = async (name: string, fill: boolean) => {
    const t0 = Date.now();
    const started = await startOrAttach(client, taskQueue, config(name));
    const handle = () => client.workflow.getHandle<typeof trainingRun>(started.workflowId);
    let done = false;
    const health: string[] = [];
    const watch = setInterval(() => {
      fetch(`${stack.storeUrl}/v1/agl/health`).then((r) => r.json() as Promise<{ status: string }>).then((b) => health.push(b.status), () => health.push('no answer'));
    }, 1000);
    const filling = fill
      ? injectAt({ stack, storeVolume: volume }, handle, { kind: 'full disk', via: 'external', batch: 1, phase: 'collecting rollouts', delayMs: 0, holdMs: fillSeconds * 1000 }, () => done)
      : Promise.resolve(false);
    const result = await handle().result();
    done = true;
    clearInterval(watch);
    const filled = await filling;
    const seconds = (Date.now() - t0) / 1000;
    log(`${name}: ${result.batchesCompleted}/${result.numBatches} batches, final checkpoint ${result.finalCheckpoint}, ${seconds.toFixed(1)} s` +
      (fill ? `; disk filled for ${fillSeconds} s: ${filled ? 'yes' : 'no (the run ended first)'}; store health seen: ${[...new Set(health)].join(', ')}` : ''));
    return outcomeOf(path.join(dataDir, 'trainer'), stack.storeUrl, name, path.join(dataDir, 'runs', name), result.numBatches);
  };
  try {
    const alone = await run('without-fill', false);
    const filled = await run('filled-for-a-minute', true);
    const wal = statSync(path.join(dataDir, 'store', 'store.sqlite-wal'), { throwIfNoEntry: false })?.size ?? 0;
    log(`volume: 2 MiB, ${volume.freeBytes()} bytes free at the end, WAL ${wal} bytes, store restarts ${stack.services.store.restarts}`);
    const same = JSON.stringify(alone.stepWeights) === JSON.stringify(filled.stepWeights) && JSON.stringify(alone.metrics) === JSON.stringify(filled.metrics);
    log(same ? 'the filled run ended with the weights and metrics of the run without the fill' : 'DIFFERENT from the run without the fill');
    if (!same) process.exitCode = 1;
  } finally {
    await stack.stop();
    volume.unmount();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
