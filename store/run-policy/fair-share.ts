// Sharing one runner fleet between runs: the queue is one FIFO per flow (a run: the rollout metadata's `agl_run`;
// rollouts naming none share the flow ''), and a dequeue takes from the flows by start-time fair queuing, so each
// flow gets rollouts in proportion to its weight (`agl_fleet_weight`, default 1) while it has any queued, and no
// flow waits behind another's backlog. A flow at its cap of rollouts in flight (`agl_max_in_flight`) is passed over.
// An idle flow earns no credit: its next start tag is at least the virtual clock (the start tag last served).
import type Database from 'better-sqlite3';
import type { RolloutRow } from '../rows';
import type { StoreDb } from '../store-db';

export interface FlowFacts {
  flow: string;
  weight: number;
  maxInFlight: number | null;
}

const CLOCK = ' clock'; // no run key starts with a space

/** The flow a rollout belongs to, its weight and cap, from its metadata (JSON text). */
export function flowOf(metadata: string | null): FlowFacts {
  if (!metadata || !metadata.includes('agl_run')) return { flow: '', weight: 1, maxInFlight: null };
  const m = (JSON.parse(metadata) ?? {}) as Record<string, unknown>;
  const weight = typeof m.agl_fleet_weight === 'number' && m.agl_fleet_weight > 0 ? m.agl_fleet_weight : 1;
  const cap = typeof m.agl_max_in_flight === 'number' && m.agl_max_in_flight >= 1 ? Math.floor(m.agl_max_in_flight) : null;
  return { flow: typeof m.agl_run === 'string' ? m.agl_run : '', weight, maxInFlight: cap };
}

/** The flow column of the queue, the flows' finish tags, and the index that counts rollouts in flight. */
export function addFairShare(db: Database.Database): void {
  const columns = db.prepare('PRAGMA table_info(rollout_queue)').all() as { name: string }[];
  if (!columns.some((c) => c.name === 'flow')) db.exec("ALTER TABLE rollout_queue ADD COLUMN flow TEXT NOT NULL DEFAULT ''");
  db.exec(`CREATE INDEX IF NOT EXISTS rollout_queue_by_flow ON rollout_queue(flow, pos);
    CREATE TABLE IF NOT EXISTS fair_share (flow TEXT PRIMARY KEY, finish REAL NOT NULL);
    CREATE INDEX IF NOT EXISTS rollouts_in_flight ON rollouts(status) WHERE status IN ('preparing', 'running');`);
}

/** The flows with queued rollouts (an index skip-scan: one look-up per flow). */
export function queuedFlows(s: StoreDb): string[] {
  const next = s.stmt('SELECT MIN(flow) AS flow FROM rollout_queue WHERE flow > ?');
  const first = s.stmt("SELECT 1 AS x FROM rollout_queue WHERE flow = '' LIMIT 1").get() as { x: number } | undefined;
  const out: string[] = first ? [''] : [];
  for (let after = ''; ; ) {
    const row = next.get(after) as { flow: string | null } | undefined;
    if (!row || row.flow === null) return out;
    out.push(row.flow);
    after = row.flow;
  }
}

/** Rollouts in flight (preparing or running) per flow: a handful, as many as the fleet has runners busy. */
export function inFlightByFlow(s: StoreDb): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of s.stmt("SELECT metadata FROM rollouts WHERE status IN ('preparing', 'running')").all() as { metadata: string | null }[]) {
    const f = flowOf(r.metadata).flow;
    out.set(f, (out.get(f) ?? 0) + 1);
  }
  return out;
}

/** The start-time fair queuing state: each flow's last finish tag and the virtual clock. */
export class FairClock {
  private readonly finish = new Map<string, number>();
  private clock: number;

  constructor(private readonly s: StoreDb) {
    this.clock = this.read(CLOCK);
  }

  private read(flow: string): number {
    return (this.s.stmt('SELECT finish FROM fair_share WHERE flow = ?').get(flow) as { finish: number } | undefined)?.finish ?? 0;
  }

  /** When the flow's next rollout would start: never before the clock (an idle flow saves up no turns). */
  startTag(flow: string): number {
    if (!this.finish.has(flow)) this.finish.set(flow, this.read(flow));
    return Math.max(this.clock, this.finish.get(flow)!);
  }

  /** One rollout of the flow served: its finish tag moves on by 1/weight, the clock to its start tag. */
  served(flow: string, weight: number): void {
    const start = this.startTag(flow);
    this.finish.set(flow, start + 1 / weight);
    this.clock = start;
    const put = this.s.stmt('INSERT INTO fair_share (flow, finish) VALUES (?, ?) ON CONFLICT(flow) DO UPDATE SET finish = excluded.finish');
    put.run(flow, start + 1 / weight);
    put.run(CLOCK, start);
  }
}

export type QueueItem = { pos: number; row: RolloutRow; facts: FlowFacts };
