// Agent workflows as a rollout source (run config `agentWorkflow`): the rollouts of a batch are made in the store
// as for runners, routed so that no runner takes them, and the collect activity serves them itself: it takes each
// queued attempt from the store and starts the user's agent workflow for it on the agent's own task queue, waits
// for it within the rollout timeout, records its reward and ends the attempt. The store's retry rules then apply as
// to any runner's attempt (a failed or timed-out workflow is a failed attempt; a retry is a new attempt and a new
// workflow). Why started by the activity and not as children of the training workflow: the training run's history
// stays the same size for 16 rollouts as for 4,096 (rollouts travel by reference), both loops collect through the
// same activities, and the agent may live in another namespace. Each agent workflow's id names its rollout and
// attempt (agents/temporal/rollout-ids.ts): a retried activity finds the workflows its earlier attempt started.
import { Context, heartbeat } from '@temporalio/activity';
import { Client, isGrpcServiceError, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { agentWorkflowRoute, type AgentWorkflowConfig } from '../config/agent-workflow';
import { StoreHttpError, type StoreClient } from '../store/client';
import type { AttemptedRollout, Json } from '../store/types';
import { rewardSpan } from '../store/reward-span';
import { agentRolloutWorkflowId, type AgentRolloutMemo, type RolloutScope } from '../agents/temporal/rollout-ids';
import type { RunSettings } from '../shared/run-types';
import { RUN_NAME } from '../shared/search-attributes';
import { rolloutsByKeyPrefix } from './batch-ref';
import { ATTEMPT_ERROR, failureLine } from './rollout-failures';
import { proxyUrlFor, storeUrlFor } from './services';
import { setTimeout as sleep } from 'node:timers/promises';

/** The grading workflow the training worker runs (workflows/grade-episode.ts). */
export const GRADE_WORKFLOW = 'aglGradeEpisode';

export interface AgentWorkflowServer {
  /** Why the agent workflows may wait for ever (no worker polls the agent's task queue), or null. */
  waiting(): string | null;
  /** Stops taking attempts; workflows still running (the batch no longer needs them) are cancelled. */
  stop(): Promise<void>;
}

interface ServeOptions {
  store: StoreClient;
  settings: RunSettings & { agentWorkflow: AgentWorkflowConfig };
  keyPrefix: string;
  signal: AbortSignal;
  log: (msg: string) => void;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
const pause = (ms: number, signal: AbortSignal) => sleep(ms, undefined, { signal }).catch(() => undefined);

/**
 * Serves the rollouts under `keyPrefix` with agent workflows until stopped: attempts an earlier try of the activity
 * left running are followed again, queued ones (new, or retries the store queued) are taken and started.
 */
export function serveAgentWorkflows(opts: ServeOptions): AgentWorkflowServer {
  const { store, settings, keyPrefix, log } = opts;
  const stopped = new AbortController();
  const both = AbortSignal.any([opts.signal, stopped.signal]);
  const ctx = Context.current();
  const client = clientFor(ctx.client, settings.agentWorkflow.namespace);
  const inFlight = new Map<string, Promise<void>>();
  let wake: () => void = () => {};
  let waiting: string | null = null;
  let lastPollerCheck = 0;
  let lastUnknown = '';
  const checkPollers = async () => {
    if (Date.now() - lastPollerCheck < 10_000) return;
    lastPollerCheck = Date.now();
    const polled = await noAgentWorker(client, settings.agentWorkflow, both);
    if ('unknown' in polled) {
      // Not known either way: the last answer stands; the reason is said once, not every 10 s.
      if (polled.unknown && polled.unknown !== lastUnknown) log(`run ${settings.runName}: ${polled.unknown}`);
      lastUnknown = polled.unknown;
      return;
    }
    lastUnknown = '';
    waiting = polled.waiting;
    if (waiting) log(waiting);
  };

  const follow = (rollout: AttemptedRollout) => {
    const key = `${rollout.rollout_id}/${rollout.attempt.attempt_id}`;
    if (inFlight.has(key)) return;
    const done = playAttempt(client, ctx, opts, rollout, both)
      .catch((err: Error) => {
        // Aborted: the activity ends or the batch is done, and the store ends the attempt; anything else is said.
        if (!both.aborted) log(`run ${settings.runName}, rollout ${rollout.rollout_id}: ${err?.message ?? String(err)}`);
      })
      .finally(() => { inFlight.delete(key); wake(); });
    inFlight.set(key, done);
  };

  const loop = (async () => {
    // An earlier try of this activity (a worker that died) left attempts running: their workflows are still there.
    // Until the store answers, no attempt is taken: a failed look is said and tried again, never left for a silent loop.
    for (let tries = 1; !both.aborted; tries++) {
      try {
        const earlier = await rolloutsByKeyPrefix(store, keyPrefix, both);
        for (const r of earlier.values()) {
          if ((r.status === 'preparing' || r.status === 'running') && 'attempt' in r && r.attempt) follow(r as AttemptedRollout);
        }
        break;
      } catch (err) {
        if (both.aborted) return;
        log(`run ${settings.runName}: could not look up the attempts an earlier try left running (try ${tries}; trying again): ${(err as Error).message}`);
        await pause(Math.min(30_000, 1_000 * 2 ** (tries - 1)), both);
      }
    }
    while (!both.aborted) {
      let taken: AttemptedRollout[] = [];
      try {
        taken = await store.dequeueRollouts(16, null, { agent: agentWorkflowRoute(settings.agentWorkflow), keyPrefix, timeoutMs: 30_000, signal: both });
      } catch (err) {
        if (!both.aborted) log(`run ${settings.runName}: dequeue failed: ${(err as Error).message}`);
      }
      for (const r of taken) follow(r);
      if (inFlight.size > 0) await checkPollers();
      if (taken.length === 0) {
        await Promise.race([pause(250, both), new Promise<void>((r) => (wake = r))]);
      }
    }
  })();

  return {
    waiting: () => waiting,
    async stop() {
      stopped.abort();
      // The loop catches what it can expect; anything else is a bug to see, not to drop.
      await loop.catch((err: Error) => log(`run ${settings.runName}: serving agent workflows ended with an error: ${err?.stack ?? String(err)}`));
      await Promise.all(inFlight.values());
    },
  };
}

// gRPC status codes (grpc/status.h) Temporal answers describeTaskQueue with.
const GRPC = { CANCELLED: 1, NOT_FOUND: 5, PERMISSION_DENIED: 7, UNIMPLEMENTED: 12 } as const;

/**
 * Whether a worker polls the agent's task queue: `waiting` says why its workflows would wait for ever (null: one
 * polls); `unknown` when Temporal could not say (with the reason, '' when the check was only cut short).
 */
export async function noAgentWorker(client: Pick<Client, 'workflowService' | 'options'>, agent: AgentWorkflowConfig, signal?: AbortSignal): Promise<{ waiting: string | null } | { unknown: string }> {
  const ns = client.options.namespace;
  try {
    const res = await client.workflowService.describeTaskQueue({
      namespace: ns,
      taskQueue: { name: agent.taskQueue },
      taskQueueType: 1, // TASK_QUEUE_TYPE_WORKFLOW
    });
    if ((res.pollers ?? []).length > 0) return { waiting: null };
    return { waiting: `no worker polls the agent's task queue "${agent.taskQueue}" (namespace ${ns}): its ${agent.type} workflows wait for one` };
  } catch (err) {
    if (signal?.aborted) return { unknown: '' };
    const code = isGrpcServiceError(err) ? err.code : undefined;
    const what = (err as Error)?.message ?? String(err);
    if (code === GRPC.CANCELLED) return { unknown: '' };
    if (code === GRPC.NOT_FOUND) return { waiting: `the agent's namespace "${ns}" is not on this Temporal server (${what}): its ${agent.type} workflows cannot start` };
    if (code === GRPC.PERMISSION_DENIED || code === GRPC.UNIMPLEMENTED) {
      return { unknown: `cannot ask Temporal whether a worker polls the agent's task queue "${agent.taskQueue}" (namespace ${ns}; not allowed or not served here: ${what}): stuck agent workflows will not be named` };
    }
    return { unknown: `could not ask Temporal whether a worker polls the agent's task queue "${agent.taskQueue}" (namespace ${ns}): ${what}` };
  }
}

function clientFor(workerClient: Client, namespace: string | null): Client {
  if (!namespace || namespace === workerClient.options.namespace) return workerClient;
  return new Client({ connection: workerClient.connection, namespace });
}

/** Starts (or finds) the agent workflow of one attempt, waits for it, records its reward and ends the attempt. */
async function playAttempt(client: Client, ctx: Context, opts: ServeOptions, rollout: AttemptedRollout, cancel: AbortSignal): Promise<void> {
  const { store, settings, log } = opts;
  const agent = settings.agentWorkflow;
  const scope: RolloutScope = { rolloutId: rollout.rollout_id, attemptId: rollout.attempt.attempt_id };
  const { rolloutId: rid, attemptId: aid } = scope;
  const info = ctx.info;
  const trainingWorkflowId = info.workflowExecution?.workflowId ?? settings.runName;
  const namespace = info.workflowNamespace ?? info.activityNamespace ?? 'default';
  const memo: AgentRolloutMemo = {
    ...scope,
    runName: settings.runName,
    trainingWorkflowId,
    trainingTaskQueue: info.taskQueue,
    storeAddress: storeUrlFor(settings),
    proxyUrl: proxyUrlFor(settings),
  };
  const sameNamespace = !agent.namespace || agent.namespace === namespace;
  // Keeps the attempt alive in the store (unresponsive_seconds) while the workflow runs.
  const beats = attemptHeartbeats(store, scope, (m) => log(`run ${settings.runName}, rollout ${rid} attempt ${aid}: ${m}`));
  const beat = setInterval(beats.beat, 5_000);
  let status: 'succeeded' | 'failed' = 'failed';
  let failure: string | null = null;
  try {
    await store.updateAttempt(rid, aid, { status: 'running', last_heartbeat_time: Date.now() / 1000 }, { timeoutMs: 30_000 });
    const handle = await startOrFind(client, agent.type, {
      taskQueue: agent.taskQueue,
      workflowId: agentRolloutWorkflowId(scope),
      args: [rollout.input],
      memo: { agl: memo as unknown as Json },
      ...(settings.rolloutTimeoutSeconds ? { workflowExecutionTimeout: `${settings.rolloutTimeoutSeconds} seconds` } : {}),
      ...(sameNamespace ? { typedSearchAttributes: [{ key: RUN_NAME, value: settings.runName }] } : {}),
      staticSummary: `rollout ${rid} (attempt ${rollout.attempt.sequence_id}) of training run ${settings.runName}`,
      staticDetails: `Training run: [${trainingWorkflowId}](/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(trainingWorkflowId)})`
        + `\n\nRollout \`${rid}\`, attempt \`${aid}\`, store ${memo.storeAddress}`,
    });
    const result = await untilDone(handle, cancel, log);
    const reward = agent.grader
      ? await grade(ctx.client, info.taskQueue, agent, scope, rollout.input, result, cancel, log)
      : rewardOfResult(result);
    if (reward !== null) await recordReward(store, rid, aid, reward);
    status = 'succeeded';
  } catch (err) {
    // The run was cancelled, or the batch no longer needs it: its workflow is cancelled, the store ends the attempt.
    if (cancel.aborted) throw err;
    failure = failureLine(err);
    log(`run ${settings.runName}, rollout ${rid} attempt ${aid}: the agent workflow failed: ${failure}`);
  } finally {
    clearInterval(beat);
  }
  // A timed-out attempt is already ended by the store's watchdog; ending it again is refused, which is fine. A
  // failed one carries its reason, which the run reports when rollouts keep failing (rollout-failures.ts).
  const ended = failure ? { status, metadata: { ...(rollout.attempt.metadata ?? {}), [ATTEMPT_ERROR]: failure } } : { status };
  await store.updateAttempt(rid, aid, ended, { timeoutMs: 30_000 }).catch((err: Error) => log(`run ${settings.runName}: could not report ${status} for ${rid}/${aid}: ${err.message}`));
  heartbeat();
}

type StartOptions = Parameters<Client['workflow']['start']>[1];

/** Starts a workflow under its id, or finds the one an earlier try started (running or closed). */
async function startOrFind(client: Client, type: string, options: StartOptions): Promise<WorkflowHandle> {
  try {
    return await client.workflow.start(type, { ...options, workflowIdConflictPolicy: 'USE_EXISTING', workflowIdReusePolicy: 'REJECT_DUPLICATE' });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return client.workflow.getHandle(options.workflowId);
    throw err;
  }
}

/**
 * The attempt's heartbeats to the store. A beat that fails is said once (and once more when beats get through again);
 * a rollout or attempt the store no longer has (404: deleted meanwhile) stops the beats.
 */
export function attemptHeartbeats(store: Pick<StoreClient, 'updateAttempt'>, scope: RolloutScope, log: (msg: string) => void): { beat: () => Promise<void> } {
  let failing = false;
  let gone = false;
  return {
    async beat() {
      if (gone) return;
      try {
        await store.updateAttempt(scope.rolloutId, scope.attemptId, { last_heartbeat_time: Date.now() / 1000 }, { timeoutMs: 10_000 });
        if (failing) log('heartbeats reach the store again');
        failing = false;
      } catch (err) {
        if (err instanceof StoreHttpError && err.status === 404) {
          gone = true;
          log(`the store no longer has this attempt; heartbeats stop: ${err.message}`);
          return;
        }
        if (!failing) log(`a heartbeat to the store failed (the store ends the attempt as unresponsive if this goes on): ${(err as Error)?.message ?? String(err)}`);
        failing = true;
      }
    },
  };
}

/** The workflow's result; when the run is cancelled (the activity aborted), the workflow is cancelled too. */
async function untilDone(handle: WorkflowHandle, signal: AbortSignal, log: (msg: string) => void): Promise<unknown> {
  let onAbort: () => void = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => {
      // Already closed: nothing to cancel. Otherwise the workflow runs on, unwatched: said.
      handle.cancel().catch((err: unknown) => {
        if (!(err instanceof WorkflowNotFoundError)) log(`could not cancel the agent workflow ${handle.workflowId}: ${(err as Error)?.message ?? String(err)}`);
      });
      reject(signal.reason ?? new Error('cancelled'));
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([handle.result(), aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** The grader activity on the agent's worker, called from a small workflow of ours (an activity needs a workflow). */
async function grade(client: Client, trainingTaskQueue: string, agent: AgentWorkflowConfig, scope: RolloutScope, task: unknown, result: unknown, signal: AbortSignal, log: (msg: string) => void): Promise<number> {
  const handle = await startOrFind(client, GRADE_WORKFLOW, {
    taskQueue: trainingTaskQueue,
    workflowId: `agl-grade:${scope.rolloutId}:${scope.attemptId}`,
    args: [{ taskQueue: agent.taskQueue, grader: agent.grader!, task, result }],
    workflowExecutionTimeout: '15 minutes',
  });
  const reward = await untilDone(handle, signal, log);
  if (typeof reward !== 'number' || !Number.isFinite(reward)) throw new TypeError(`the grader ${agent.grader} returned ${JSON.stringify(reward)}, not a finite number`);
  return reward;
}

/**
 * The reward an agent workflow's result carries: a finite number, or an object's numeric `reward`; nothing (null or
 * undefined) when it reported its reward itself. Anything else is a mistake, said plainly.
 */
export function rewardOfResult(result: unknown): number | null {
  if (result === undefined || result === null) return null;
  if (typeof result === 'number' && Number.isFinite(result)) return result;
  const field = typeof result === 'object' ? (result as { reward?: unknown }).reward : undefined;
  if (typeof field === 'number' && Number.isFinite(field)) return field;
  const shown = JSON.stringify(result)?.slice(0, 80) ?? String(result);
  throw new TypeError(`the agent workflow returned ${shown}: return the reward as a finite number (or { reward }), or name a grader in agentWorkflow.grader`);
}

/** The reward annotation span under the attempt, as runners record it. */
export async function recordReward(store: StoreClient, rolloutId: string, attemptId: string, reward: number): Promise<void> {
  const seq = await store.getNextSpanSequenceId(rolloutId, attemptId, { timeoutMs: 30_000 });
  await store.addSpan(rewardSpan(rolloutId, attemptId, seq, reward), { timeoutMs: 30_000 });
}
