// Disk use behind a run, read once a step beside its metrics, so `client status` and the UI say whether a long
// run's disk stays bounded: the store's database and write-ahead log, and what the local trainer keeps
// (hosted Tinker does not say, so it is left out). Both services' totals, for every run they serve. The reads share
// one short deadline and run beside the step's other bookkeeping; a service that does not answer in time is left
// out: the report never holds a step up for long or fails it. Any other failure leaves it out too, and is said once
// per run, service and reason (not at every step).
import { log } from '@temporalio/activity';
import type { DiskUse, RunSettings } from '../shared/run-types';
import { storeFor, tinkerUrlFor } from './services';

const DEADLINE_MS = 2_000;

async function storeDisk(settings: RunSettings, signal: AbortSignal): Promise<DiskUse['store']> {
  const health = await storeFor(settings).healthDetail({ timeoutMs: DEADLINE_MS, signal });
  return health.disk ? { bytes: health.disk.db_bytes + health.disk.wal_bytes } : undefined;
}

async function trainerDisk(settings: RunSettings, signal: AbortSignal): Promise<DiskUse['trainer']> {
  const base = tinkerUrlFor(settings);
  if (!base) return undefined;
  // The trainer tells its disk use only to a caller with its key (healthz itself is open to all).
  const key = process.env.TINKER_API_KEY;
  const res = await fetch(`${base.replace(/\/+$/, '')}/api/v1/healthz`, { signal, headers: key ? { 'x-api-key': key } : {} });
  const body = (await res.json()) as { disk?: { data_bytes?: unknown; volume_free_bytes?: unknown } };
  const d = body.disk;
  if (typeof d?.data_bytes !== 'number' || typeof d.volume_free_bytes !== 'number') return undefined;
  return { bytes: d.data_bytes, volumeFreeBytes: d.volume_free_bytes };
}

const said = new Set<string>();

/** A read left out: silently when it ran past the deadline, else said once per run, service and reason. */
function leftOut(settings: RunSettings, service: string, signal: AbortSignal, say: (msg: string) => void) {
  return (err: unknown): undefined => {
    if (signal.aborted) return undefined; // past the deadline: the documented case
    const reason = ((err as Error)?.message ?? String(err)).split('\n')[0]!.slice(0, 300);
    const key = `${settings.runName}\0${service}\0${reason}`;
    if (said.has(key)) return undefined;
    if (said.size > 1000) said.clear();
    said.add(key);
    say(`run ${settings.runName}: the ${service}'s disk use is left out of the step's report: ${reason}`);
    return undefined;
  };
}

export async function readDiskUse(settings: RunSettings, step: number, say: (msg: string) => void = (m) => log.warn(m)): Promise<DiskUse> {
  const signal = AbortSignal.timeout(DEADLINE_MS);
  const [store, trainer] = await Promise.all([
    storeDisk(settings, signal).catch(leftOut(settings, 'store', signal, say)),
    trainerDisk(settings, signal).catch(leftOut(settings, 'trainer', signal, say)),
  ]);
  return { atStep: step, ...(store ? { store } : {}), ...(trainer ? { trainer } : {}) };
}
