// `npm run client -- export <run> [--dir D] [--store URL]`: writes a run's files (metrics.jsonl, checkpoints.jsonl,
// trace_events.jsonl, configured.jsonl, config.json and report.html) from its records in the store, into D (default
// ./<runName>), on any machine that reaches the store. Incremental: run again, it appends only what is new.
import path from 'node:path';
import { UsageError } from '../common/service-args';
import { exportRunFiles } from '../activities/run-export';
import { localRunFile } from '../activities/run-records';
import { setServiceOverrides, storeClient } from '../activities/services';
import { writeRunReport } from '../report/write-report';
import type { RunSettings } from '../shared/run-types';

export const DEFAULT_STORE_URL = 'http://127.0.0.1:4747';

/** The store's name of the run: `<runName>@<instance>` (or a bare name, for records written without one). */
export async function findRunInstance(storeUrl: string, run: string): Promise<{ runName: string; instanceId?: string }> {
  const name = run.replace(/^agl-run-/, '');
  let runs: string[];
  try {
    runs = [...new Set((await storeClient(storeUrl).runsWithRecords({ timeoutMs: 10_000 })).map((r) => r.run))];
  } catch (err) {
    throw new UsageError(`export: the store at ${storeUrl} cannot be listed (${(err as Error).message.split('\n')[0]}); give --store URL (and AGL_STORE_TOKEN)`);
  }
  if (runs.includes(name) && name.includes('@')) return { runName: name.split('@')[0]!, instanceId: name.slice(name.indexOf('@') + 1) };
  const instances = runs.filter((r) => r.startsWith(`${name}@`) && r !== `${name}@`);
  if (instances.length === 1) return { runName: name, instanceId: instances[0]!.slice(name.length + 1) };
  if (instances.length > 1) throw new UsageError(`export: run ${name} has ${instances.length} instances in the store; name one: ${instances.join(', ')}`);
  if (runs.includes(name)) return { runName: name };
  throw new UsageError(`export: the store at ${storeUrl} has no records of a run ${JSON.stringify(name)}`);
}

/** Exports the run into `dir`; returns the directory. */
export async function exportCommand(run: string | undefined, dir: string | undefined, storeUrl: string): Promise<string> {
  if (!run) throw new UsageError('export needs a run name (or <runName>@<instance>), e.g. npm run client -- export hello --dir ./hello');
  setServiceOverrides({ storeUrl });
  const { runName, instanceId } = await findRunInstance(storeUrl, run);
  const logPath = path.resolve(dir ?? runName);
  const settings = { runName, instanceId, logPath, storeAddress: storeUrl } as RunSettings;
  await localRunFile(settings, 'config.json');
  await exportRunFiles(settings, logPath);
  writeRunReport(logPath);
  return logPath;
}
