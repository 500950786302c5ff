// `npm run client -- report <run> [<run>...] [--out file]`: an HTML report of one run, or of several overlaid.
// A <run> is a run directory (its logPath), read from disk alone, or a run name / workflow id, whose logPath
// and status come from Temporal (the config it was started with, and how its workflow stands).
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { workflowUiLink, type TemporalSettings } from '../common/temporal-settings';
import { UsageError } from '../common/service-args';
import { loadRun, type RunData } from '../report/run-data';
import { reportPath, writeReport } from '../report/write-report';
import type { TrainingRunInput } from '../shared/run-types';
import { workflowIdFor } from './run-commands';
import { sweepInputOf } from './sweep-command';
import { sweepChildren, sweepWorkflowId } from '../shared/sweep-plan';

const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();

/** A run's files, found through Temporal: the logPath of the config its workflow was started with. */
async function runFromTemporal(client: Client, settings: TemporalSettings, run: string): Promise<RunData> {
  const workflowId = run.startsWith('agl-run-') ? run : workflowIdFor(run);
  const handle = client.workflow.getHandle(workflowId);
  const [d, history] = await Promise.all([
    handle.describe(),
    client.workflowService.getWorkflowExecutionHistory({ namespace: settings.namespace, execution: { workflowId }, maximumPageSize: 1 }),
  ]);
  const payload = history.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  const input = payload ? defaultPayloadConverter.fromPayload<TrainingRunInput>(payload) : undefined;
  const logPath = input?.config?.logPath;
  if (typeof logPath !== 'string') throw new UsageError(`report: ${workflowId} has no run config with a logPath in its history`);
  const dir = path.resolve(logPath.replace(/^~(?=$|\/)/, process.env.HOME ?? '~'));
  if (!isDir(dir)) throw new UsageError(`report: ${workflowId} logs to ${dir}, which is not on this machine (give the run's directory instead)`);
  const state = d.status.name;
  return loadRun(dir, {
    workflowId,
    uiLink: workflowUiLink(settings, workflowId),
    ...(state === 'RUNNING' || state === 'COMPLETED' ? {} : { status: state.toLowerCase().replace(/_/g, ' ') }),
  });
}

/**
 * The workflow ids of a sweep's children that have started (or null when `name` is no sweep): `agl-sweep-<name>`,
 * or a bare name with no run of that name but a sweep. Found from the sweep's start input, so finished sweeps too.
 */
async function sweepChildIds(client: Client, name: string): Promise<string[] | null> {
  if (name.startsWith('agl-run-')) return null;
  const exists = (id: string) => client.workflow.getHandle(id).describe().then(() => true, () => false);
  if (!name.startsWith('agl-sweep-') && ((await exists(workflowIdFor(name))) || !(await exists(sweepWorkflowId(name))))) return null;
  const children = sweepChildren(await sweepInputOf(client, name));
  const started = await Promise.all(children.map((c) => exists(c.workflowId)));
  return children.filter((_, i) => started[i]).map((c) => c.workflowId);
}

/**
 * Writes the report and returns its path: one run's to <logPath>/report.html, several to `out`
 * (default ./report-<a>-vs-<b>.html).
 */
export async function reportCommand(runs: string[], out: string | undefined, settings: TemporalSettings, connect: () => Promise<Client>): Promise<string> {
  if (runs.length === 0) throw new UsageError('report needs at least one run: a run directory, a run name or a workflow id');
  let client: Client | undefined;
  const data: RunData[] = [];
  const sweeps: string[] = [];
  for (const r of runs) {
    if (isDir(r)) {
      data.push(loadRun(r, { uiLink: null }));
      continue;
    }
    try {
      client ??= await connect();
    } catch (err) {
      throw new UsageError(`report: ${r} is not a directory, and Temporal at ${settings.address} cannot be reached to find it (${(err as Error).message})`);
    }
    const children = await sweepChildIds(client, r);
    if (children) {
      sweeps.push(r.replace(/^agl-sweep-/, ''));
      for (const id of children) data.push(await runFromTemporal(client, settings, id));
    } else data.push(await runFromTemporal(client, settings, r));
  }
  if (data.length === 0) throw new UsageError(`report: sweep ${runs.join(', ')} has started no run yet`);
  const file = out
    ? path.resolve(out)
    : sweeps.length === runs.length
      ? path.resolve(`report-${sweeps.join('-vs-')}.html`)
      : data.length === 1
        ? reportPath(data[0]!.logPath)
        : path.resolve(`report-${data.map((d) => d.name).join('-vs-')}.html`);
  return writeReport(data, file);
}
