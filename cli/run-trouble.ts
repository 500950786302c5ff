// What holds a running run up, read from Temporal itself (describe and the task queue), so `client status` and
// `client watch` can say it even when the run cannot answer a query: a workflow task that keeps failing (the
// namespace lacks the runs' search attributes), no worker on the task queue, an activity whose attempts keep
// failing (a service unreachable, with its URL and error, from the pending activity's last failure).
import type { Client, WorkflowHandle } from '@temporalio/client';
import { checkSearchAttributes, describeProblem, type OperatorCalls } from './search-attribute-setup';

type Timestamp = { seconds?: number | { toNumber(): number } | null; nanos?: number | null } | null | undefined;

function ms(t: Timestamp): number | undefined {
  if (!t || t.seconds === undefined || t.seconds === null) return undefined;
  const s = typeof t.seconds === 'number' ? t.seconds : t.seconds.toNumber();
  return s * 1000 + Math.round((t.nanos ?? 0) / 1e6);
}

const ago = (at: number | undefined, now: number) => (at === undefined ? '' : ` ${Math.max(0, Math.round((now - at) / 1000))} s ago`);

/** The message of a failure and of its causes, outermost first, on one line. */
function failureText(f: { message?: string | null; cause?: unknown } | null | undefined): string {
  const parts: string[] = [];
  for (let e = f, i = 0; e && i < 4; e = e.cause as typeof f, i++) {
    const m = (e.message ?? '').replace(/\s*\n\s*/g, ' ').trim();
    if (m && !parts.some((p) => p.includes(m))) parts.push(m);
  }
  return parts.join(': ');
}

export interface TroubleContext {
  client: Client;
  operator: OperatorCalls;
  namespace: string;
  taskQueue: string;
  address: string;
}

/**
 * Lines saying what keeps a running run from going on; empty when nothing does. Each check that cannot be made
 * (a server that does not let us list search attributes, say) is left out rather than guessed.
 */
export async function runTrouble(handle: WorkflowHandle, ctx: TroubleContext, now = Date.now()): Promise<string[]> {
  const out: string[] = [];
  const d = await handle.describe();
  if (d.status.name !== 'RUNNING') return out;
  const raw = d.raw;
  const wft = raw.pendingWorkflowTask;
  // Looked at on every call, not only once a workflow task failed: with no worker started (it refuses such a
  // namespace) no task fails, and the run would just wait.
  const attrs = await checkSearchAttributes(ctx.operator, ctx.namespace).catch(() => null);
  const problem = attrs && describeProblem(attrs, ctx.namespace, ctx.address);
  if (problem) out.push(`the run cannot go on: ${problem}`);
  else if (wft && (wft.attempt ?? 1) > 1) out.push(`the run's workflow task has failed ${wft.attempt! - 1} times: the worker's log says why`);
  const queue = await ctx.client.workflowService
    .describeTaskQueue({ namespace: ctx.namespace, taskQueue: { name: d.taskQueue || ctx.taskQueue }, taskQueueType: 1 })
    .catch(() => null);
  if (queue && (queue.pollers ?? []).length === 0) {
    out.push(`no worker polls the task queue ${d.taskQueue || ctx.taskQueue}: start one (npm run worker, or npm start)`);
  }
  for (const a of raw.pendingActivities ?? []) {
    if (!a.lastFailure || (a.attempt ?? 1) < 2) continue;
    const next = ms(a.nextAttemptScheduleTime);
    const retry = next !== undefined && next > now ? `; retrying in ${Math.round((next - now) / 1000)} s` : '; retrying';
    out.push(`${a.activityType?.name ?? 'an activity'} attempt ${a.attempt! - 1} failed${ago(ms(a.lastAttemptCompleteTime), now)}: ${failureText(a.lastFailure)}${retry}`);
  }
  return out;
}

/** True when a trouble line means the run cannot answer a query now (no worker, a failing workflow task). */
export function blocksQueries(lines: string[]): boolean {
  return lines.some((l) => /^(the run cannot go on|the run's workflow task|no worker polls)/.test(l));
}

/** The lines without their clocks ("3 s ago", "retrying in 4 s"), to tell a new trouble from the same one later. */
export function troubleKey(lines: string[]): string {
  return lines.join('\n').replace(/ \d+ s ago| in \d+ s/g, '');
}
