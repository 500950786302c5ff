// The client commands that look at runs without steering them: status, watch, list, report, export, ping.
import type { Client } from '@temporalio/client';
import { closeServices } from '../activities/services';
import { workflowUiLink, type TemporalSettings } from '../common/temporal-settings';
import { diskText } from '../shared/disk-text';
import { unitOf } from '../workflows/batch-numbering';
import { link, needRun, type CommandContext } from './command-context';
import { DEFAULT_STORE_URL, exportCommand as exportRun } from './export-command';
import { CommandError, failureMessage } from './mistakes';
import { ping } from './ping';
import { progressLine } from './progress-format';
import { reportCommand as writeReport } from './report-command';
import { resultLine } from './result-line';
import { runHandle, status, watch } from './run-commands';
import { runTrouble } from './run-trouble';

function troubleContext(client: Client, s: TemporalSettings) {
  return { client, operator: client.connection.operatorService, namespace: s.namespace, taskQueue: s.taskQueue, address: s.address };
}

export async function statusCommand(c: CommandContext): Promise<void> {
  const client = await c.connect();
  const h = runHandle(client, needRun(c));
  c.about.workflowId = h.workflowId;
  const trouble = () => runTrouble(h, troubleContext(client, c.settings));
  const s = await status(h, trouble);
  // A running run: where it is, and what holds it up (a run that cannot even answer: exit 1).
  if (s.state === 'RUNNING') {
    if (s.progress) process.stdout.write(`${progressLine(s.progress)}\n`);
    const disk = s.progress && diskText(s.progress.disk, unitOf(!!s.progress.async));
    if (disk) process.stdout.write(`${disk}\n`);
    for (const line of s.trouble ?? []) process.stdout.write(`${line}\n`);
    if (!s.progress) process.exitCode = 1;
  } else if (s.result) process.stdout.write(`${resultLine(s.result)}\n`);
  else {
    // A run that failed, was terminated or timed out: why, and a non-zero exit.
    process.stdout.write(`${s.ended ?? s.state}\n`);
    process.exitCode = 1;
  }
  link(c, h.workflowId);
}

export async function watchCommand(c: CommandContext): Promise<void> {
  const client = await c.connect();
  const h = runHandle(client, needRun(c));
  c.about.workflowId = h.workflowId;
  link(c, h.workflowId);
  let result;
  try {
    result = await watch(h, process.stdout, 1000, undefined, () => runTrouble(h, troubleContext(client, c.settings)));
  } catch (err) {
    throw new CommandError(`run ${h.workflowId} failed: ${failureMessage(err)}`);
  }
  process.stdout.write(`${resultLine(result)}\n`);
}

export async function listCommand(c: CommandContext): Promise<void> {
  const client = await c.connect();
  const listed = [];
  for await (const w of client.workflow.list({ query: `WorkflowType = "trainingRun"` })) listed.push({ w, memo: ((await w.memo) ?? {}) as Record<string, unknown> });
  // Each running run's share of the runner fleet: its fleetWeight over all running runs' (store/run-policy/fair-share.ts).
  const weightOf = (m: Record<string, unknown>) => (typeof m.fleetWeight === 'number' ? m.fleetWeight : 1);
  const totalWeight = listed.filter((l) => l.w.status.name === 'RUNNING').reduce((sum, l) => sum + weightOf(l.memo), 0);
  for (const { w, memo } of listed) {
    const sa = w.searchAttributes as Record<string, unknown[] | undefined>;
    // AglBatch is how many batches are done (batch N is the (N+1)th, as metrics.jsonl's step).
    const done = sa.AglBatch?.[0] ?? 0;
    const reward = sa.AglTrainReward?.[0];
    const parent = sa.AglParentRun?.[0];
    const lineage = typeof parent === 'string' ? `\tfork of ${parent} at step ${String(sa.AglForkStep?.[0] ?? '?')}` : '';
    const sweepOf = typeof sa.AglSweep?.[0] === 'string' ? `\tsweep ${sa.AglSweep[0]}` : '';
    const cap = typeof memo.maxRolloutsInFlight === 'number' ? `, at most ${memo.maxRolloutsInFlight} in flight` : '';
    const share = w.status.name === 'RUNNING' ? `\tfleet share ${((100 * weightOf(memo)) / totalWeight).toFixed(0)}% (weight ${weightOf(memo)}${cap})` : '';
    process.stdout.write(
      `${w.workflowId}\t${w.status.name}\t${done} batches done\treward ${typeof reward === 'number' ? reward.toFixed(3) : '-'}${share}${lineage}${sweepOf}\t${workflowUiLink(c.settings, w.workflowId)}\n`,
    );
  }
}

export async function reportCommand(c: CommandContext): Promise<void> {
  const file = await writeReport(c.rest, c.values.out, c.settings, () => c.connect());
  process.stdout.write(`report: ${file}\n`);
}

export async function exportCommand(c: CommandContext): Promise<void> {
  const dir = await exportRun(c.rest[0], c.values.dir, c.values.store ?? process.env.AGL_STORE_URL ?? DEFAULT_STORE_URL);
  process.stdout.write(`exported to ${dir}\n`);
  await closeServices();
}

export async function pingCommand(c: CommandContext): Promise<void> {
  const report = await ping(await c.connect(), c.settings);
  process.stdout.write(`${JSON.stringify(report)}\n`);
}
