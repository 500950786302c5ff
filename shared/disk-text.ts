// How a run's disk use reads in `client status` and the Temporal UI's current details (one line, both places).
import type { DiskUse } from './run-types';

const size = (bytes: number) =>
  bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(1)} GiB` : bytes >= 2 ** 20 ? `${(bytes / 2 ** 20).toFixed(1)} MiB` : `${Math.round(bytes / 1024)} KiB`;

/** e.g. "disk after step 41: store 5.3 MiB, trainer 106.0 MiB (19.2 GiB free)"; null when nothing was read. */
export function diskText(d: DiskUse | undefined, unit = 'step'): string | null {
  if (!d || (!d.store && !d.trainer)) return null;
  const parts = [
    ...(d.store ? [`store ${size(d.store.bytes)}`] : []),
    ...(d.trainer ? [`trainer ${size(d.trainer.bytes)} (${size(d.trainer.volumeFreeBytes)} free)`] : []),
  ];
  return `disk after ${unit} ${d.atStep}: ${parts.join(', ')}`;
}
