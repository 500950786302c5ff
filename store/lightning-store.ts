// The LightningStore semantics of §3 over SQLite, as one object for the HTTP layer. The work is in the parts:
// store-db.ts (statements, transactions, write batching), transitions.ts (shared state changes), rollout-ops.ts,
// attempt-ops.ts, span-ops.ts, worker-ops.ts, resource-ops.ts. Every public method is one transaction (or a
// savepoint of the open write batch) or a read; methods are synchronous (better-sqlite3), so the HTTP layer needs
// no locking. Listeners hear about rollouts that reached a terminal status after the commit that finished them.
import type Database from 'better-sqlite3';
import * as attempts from './attempt-ops';
import * as resources from './resource-ops';
import * as rollouts from './rollout-ops';
import * as runRecords from './run-records';
import * as retention from './run-policy/retention';
import * as spans from './span-ops';
import { StoreDb } from './store-db';
import type {
  Attempt, AttemptedRollout, CallRecord, EnqueueRolloutRequest, JsonObject, NamedResources, PaginatedResult, Pagination,
  QueryResourcesRequest, QuerySpansRequest, QueryWorkersRequest, ResourcesUpdate, Rollout, Span, StartRolloutRequest,
  StoreStatistics, UpdateAttemptRequest, UpdateRolloutRequest, Worker,
} from './types';
import * as workers from './worker-ops';

export interface LightningStoreOptions {
  /** Seconds since the epoch; injectable for tests. */
  now?: () => number;
  name?: string;
  /**
   * Share one transaction among the writes of one event-loop turn (store-db.ts); callers then await `settled()`
   * before answering. Off: every write commits on its own before it returns.
   */
  batchWrites?: boolean;
}

export class LightningStore {
  private readonly s: StoreDb;
  private readonly name: string;

  constructor(db: Database.Database, options: LightningStoreOptions = {}) {
    this.s = new StoreDb(db, options.now ?? (() => Date.now() / 1000), options.batchWrites ?? false);
    this.name = options.name ?? 'SqliteLightningStore';
  }

  /** The connection and its transactions, for an API mounted on the store's server (the Agent-lightning 1.0 gateway, gateway/), which shares them. */
  get storeDb(): StoreDb { return this.s; }
  /** Incremented by every durable write (the server fsyncs before acknowledging those). */
  get writeCount(): number { return this.s.writeCount; }
  /** Incremented by every commit. */
  get commitCount(): number { return this.s.commitCount; }
  /** Resolves once the writes made so far are committed (at once without write batching). */
  settled(): Promise<void> { return this.s.settled(); }
  /** Commits an open write batch now. */
  flush(): void { this.s.flushBatch(); }

  onRolloutsFinished(listener: (rollouts: Rollout[]) => void): () => void {
    return this.s.onRolloutsFinished(listener);
  }

  // rollouts
  enqueueRollouts(reqs: EnqueueRolloutRequest[], idempotencyKeys: (string | null)[] = []): Rollout[] { return rollouts.enqueueRollouts(this.s, reqs, idempotencyKeys); }
  startRollout(req: StartRolloutRequest, idempotencyKey: string | null = null): AttemptedRollout { return rollouts.startRollout(this.s, req, idempotencyKey); }
  dequeue(limit: number, workerId: string | null, filter: rollouts.DequeueFilter = {}): AttemptedRollout[] { return rollouts.dequeue(this.s, limit, workerId, filter); }
  startAttempt(rolloutId: string, workerId: string | null): AttemptedRollout { return rollouts.startAttempt(this.s, rolloutId, workerId); }
  getRolloutById(rolloutId: string): Rollout | AttemptedRollout | null { return rollouts.getRolloutById(this.s, rolloutId); }
  queryRollouts(q: rollouts.RolloutQuery): PaginatedResult<Rollout | AttemptedRollout> { return rollouts.queryRollouts(this.s, q); }
  updateRollout(rolloutId: string, update: UpdateRolloutRequest): Rollout { return rollouts.updateRollout(this.s, rolloutId, update); }
  finishedRollouts(ids: string[]): Rollout[] { return rollouts.finishedRollouts(this.s, ids); }
  unfinishedRolloutIds(ids: string[]): Set<string> { return rollouts.unfinishedRolloutIds(this.s, ids); }

  // attempts
  queryAttempts(rolloutId: string, p: Pagination): PaginatedResult<Attempt> { return attempts.queryAttempts(this.s, rolloutId, p); }
  getLatestAttempt(rolloutId: string): Attempt | null { return attempts.getLatestAttempt(this.s, rolloutId); }
  updateAttempt(rolloutId: string, attemptId: string, update: UpdateAttemptRequest): Attempt { return attempts.updateAttempt(this.s, rolloutId, attemptId, update); }
  scanUnhealthy(servingSince?: number): number { return attempts.scanUnhealthy(this.s, servingSince); }

  // workers
  queryWorkers(q: QueryWorkersRequest): PaginatedResult<Worker> { return workers.queryWorkers(this.s, q); }
  getWorkerById(workerId: string): Worker | null { return workers.getWorkerById(this.s, workerId); }
  updateWorker(workerId: string, heartbeatStats?: JsonObject | null): Worker { return workers.updateWorker(this.s, workerId, heartbeatStats); }

  // resources
  addResources(r: NamedResources, idempotencyKey: string | null = null): ResourcesUpdate { return resources.addResources(this.s, r, idempotencyKey); }
  updateResources(resourcesId: string, r: NamedResources): ResourcesUpdate { return resources.updateResources(this.s, resourcesId, r); }
  getResourcesById(resourcesId: string): ResourcesUpdate | null { return resources.getResourcesById(this.s, resourcesId); }
  getLatestResources(): ResourcesUpdate | null { return resources.getLatestResources(this.s); }
  queryResources(q: QueryResourcesRequest): PaginatedResult<ResourcesUpdate> { return resources.queryResources(this.s, q); }

  // spans
  nextSequenceIds(rolloutIds: string[]): number[] { return spans.nextSequenceIds(this.s, rolloutIds); }
  addSpans(input: Span[]): Span[] { return spans.addSpans(this.s, input); }
  addSpanIfRevision(input: Span, revision: number): spans.ConditionalSpanWrite { return spans.addSpanIfRevision(this.s, input, revision); }
  rolloutRevision(rolloutId: string): number { return spans.rolloutRevision(this.s, rolloutId); }
  attemptExists(rolloutId: string, attemptId: string): boolean { return spans.attemptExists(this.s, rolloutId, attemptId); }
  querySpans(q: QuerySpansRequest): PaginatedResult<Span> { return spans.querySpans(this.s, q); }
  callRecord(rolloutId: string, attemptId: string, callKey: string, withLast: boolean): CallRecord { return spans.callRecord(this.s, rolloutId, attemptId, callKey, withLast); }

  // a training run's records (ours: run-records.ts)
  putRunRecords(run: string, records: runRecords.RunRecordInput[]): runRecords.RunRecord[] { return runRecords.putRunRecords(this.s, run, records); }
  queryRunRecords(run: string, q: runRecords.RunRecordQuery): runRecords.RunRecord[] { return runRecords.queryRunRecords(this.s, run, q); }
  runRecordRuns(): ReturnType<typeof runRecords.runRecordRuns> { return runRecords.runRecordRuns(this.s); }
  pruneRun(run: string, beforeBatch: number): retention.PruneResult { return retention.pruneRun(this.s, run, beforeBatch); }

  statistics(): StoreStatistics {
    const count = (table: string) => (this.s.stmt(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    return {
      name: this.name,
      total_rollouts: count('rollouts'),
      total_attempts: count('attempts'),
      total_spans: count('spans'),
      total_resources: count('resources'),
      total_workers: count('workers'),
      uptime: this.s.now() - this.s.startedAt,
    };
  }
}
