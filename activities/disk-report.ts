// Disk use behind a run, read once a step after its metrics are written, so `client status` and the UI say
// whether a long run's disk stays bounded (issue 25): the store's database and write-ahead log, and what the
// local trainer keeps (hosted Tinker does not say, so it is left out). A service that does not answer in time
// is left out too: the report never holds a step up or fails it.
import type { DiskUse, RunSettings } from '../shared/run-types';
import { storeFor, tinkerUrlFor } from './services';

const DEADLINE_MS = 3_000;

async function storeDisk(settings: RunSettings): Promise<DiskUse['store']> {
  const health = await storeFor(settings).healthDetail({ timeoutMs: DEADLINE_MS });
  return health.disk ? { bytes: health.disk.db_bytes + health.disk.wal_bytes } : undefined;
}

async function trainerDisk(settings: RunSettings): Promise<DiskUse['trainer']> {
  const base = tinkerUrlFor(settings);
  if (!base) return undefined;
  const res = await fetch(`${base.replace(/\/+$/, '')}/api/v1/healthz`, { signal: AbortSignal.timeout(DEADLINE_MS) });
  const body = (await res.json()) as { disk?: { data_bytes?: unknown; volume_free_bytes?: unknown } };
  const d = body.disk;
  if (typeof d?.data_bytes !== 'number' || typeof d.volume_free_bytes !== 'number') return undefined;
  return { bytes: d.data_bytes, volumeFreeBytes: d.volume_free_bytes };
}

export async function readDiskUse(settings: RunSettings, step: number): Promise<DiskUse> {
  const [store, trainer] = await Promise.all([storeDisk(settings).catch(() => undefined), trainerDisk(settings).catch(() => undefined)]);
  return { atStep: step, ...(store ? { store } : {}), ...(trainer ? { trainer } : {}) };
}
