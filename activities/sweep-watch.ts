// What a sweep workflow asks of the world: a child's eval reward at a milestone, read from the metrics rows the
// child committed to the store (not from the child's workflow, which may be busy, paused or being replayed), the
// ordinary stop of a child (the `stop` update, sent through the worker's Temporal client, since a workflow can only
// signal another), and every child's last eval reward at the end. Each is a read or an idempotent request, so a
// retry after a worker crash does no harm.
import { Context, heartbeat, log, sleep } from '@temporalio/activity';
import { WorkflowNotFoundError, WorkflowUpdateStage } from '@temporalio/client';
import { storeClient, storeUrlFor } from './services';
import type { RunSettings } from '../shared/run-types';
import type { Progress, StopRequest } from '../shared/run-types';

export const EVAL_REWARD_KEY = 'test/env/all/reward/total';
const POLL_MS = 1000;

const storeAt = (storeAddress: string) => storeClient(storeUrlFor({ storeAddress } as RunSettings));

const evalOf = (body: string): number | null => {
  const v = (JSON.parse(body) as Record<string, unknown>)[EVAL_REWARD_KEY];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
};

/**
 * Waits until the child has committed the metrics row of `step` (the row that holds the eval of the policy after
 * `step` steps) and holds itself after it, and returns that eval reward (null when the row has none). Heartbeats
 * while it waits; the sweep cancels it when the child ends first.
 */
export async function sweepWaitForEval(a: { storeAddress: string; workflowId: string; runKey: string; step: number }): Promise<number | null> {
  const store = storeAt(a.storeAddress);
  const said = sayOnce(a.runKey);
  let score: number | null | undefined;
  for (;;) {
    heartbeat();
    if (score === undefined) {
      let row: { body: string } | undefined;
      try {
        [row] = await store.runRecords(a.runKey, { kind: 'metrics', step: a.step, limit: 1 });
        said.ok('reading its metrics');
      } catch (err) {
        // Tried again at the next poll (the store restarting, say); said once until a read works.
        said.failed('reading its metrics', err as Error);
      }
      if (row) score = evalOf(row.body);
    }
    // Then until the child holds itself before its next batch, so a `resume` sent next cannot come before the hold.
    if (score !== undefined && (await heldAfter(a.workflowId, a.step, said))) return score;
    await sleep(POLL_MS); // rejects when the sweep cancels the wait
  }
}

/** Says a failing read once, with the run and the reason, and once more when it works again. */
function sayOnce(run: string) {
  const failing = new Set<string>();
  return {
    failed(what: string, err: Error) {
      if (failing.has(what)) return;
      failing.add(what);
      log.warn(`sweep: ${what} of ${run} failed; trying again each second: ${err?.message ?? String(err)}`, { run });
    },
    ok(what: string) {
      if (failing.delete(what)) log.info(`sweep: ${what} of ${run} works again`, { run });
    },
  };
}

/**
 * The child is paused before batch step+1, or has ended, or is gone (then its result ends it in the sweep). Not yet
 * while Temporal cannot say (a query that finds no worker now, the server restarting): said once, asked again.
 */
async function heldAfter(workflowId: string, step: number, said: ReturnType<typeof sayOnce>): Promise<boolean> {
  const handle = Context.current().client.workflow.getHandle(workflowId);
  try {
    if ((await handle.describe()).status.name !== 'RUNNING') return true;
    const p = await handle.query<Progress>('progress');
    said.ok('asking whether it holds');
    return p.paused && p.phase === 'paused' && p.batch > step;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return true;
    said.failed('asking whether it holds', err as Error);
    return false;
  }
}

/** Asks a child to stop as `client stop` does (final checkpoint); returns once the child has accepted, or has ended. */
export async function sweepStopRun(a: { workflowId: string; reason: string }): Promise<void> {
  const handle = Context.current().client.workflow.getHandle(a.workflowId);
  if ((await handle.describe()).status.name !== 'RUNNING') return;
  const req: StopRequest = { reason: a.reason };
  try {
    // The same update id on every retry: the child takes the stop once.
    await handle.startUpdate('stop', { args: [req], updateId: `sweep-stop-${a.workflowId}`, waitForStage: WorkflowUpdateStage.ACCEPTED });
  } catch (err) {
    if ((await handle.describe()).status.name !== 'RUNNING') return; // it ended meanwhile: nothing to stop
    throw err;
  }
}

/** Each child's last eval reward and the step it was logged at, from its metrics rows in the store. */
export async function sweepFinalScores(a: { storeAddress: string; runKeys: string[] }): Promise<{ lastEvalReward: number | null; lastEvalStep: number | null }[]> {
  const store = storeAt(a.storeAddress);
  const out = [];
  for (const runKey of a.runKeys) {
    let best: { step: number; reward: number } | null = null;
    for (let seq = 0; ; ) {
      heartbeat();
      const page = await store.runRecords(runKey, { kind: 'metrics', after_seq: seq, limit: 1000 });
      for (const r of page) {
        const reward = evalOf(r.body);
        if (reward !== null && (!best || r.step >= best.step)) best = { step: r.step, reward };
      }
      if (page.length < 1000) break;
      seq = page[page.length - 1]!.seq;
    }
    out.push({ lastEvalReward: best?.reward ?? null, lastEvalStep: best?.step ?? null });
  }
  return out;
}

export const sweepActivities = { sweepWaitForEval, sweepStopRun, sweepFinalScores };
export type SweepActivities = typeof sweepActivities;
