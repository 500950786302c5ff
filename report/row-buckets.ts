// A long run's metrics rows folded into a bounded number of points, so its report costs the same memory at step
// 10,000 as at step 1,000. Rows are taken one at a time in step order; up to `maxPoints` rows each is a
// point of its own (a short run's report is unchanged). Past that, neighbouring points merge in pairs, so each point
// stands for the same number of consecutive steps: it sits at the last of them and holds each metric's mean over the
// rows that logged it. What must stay exact is kept beside the points: the rows seen, the last value of each metric,
// and the run's clock (the running sum of time/total) at each point.
/** A metrics.jsonl row, numbers only (its `step` included). */
export type Row = Record<string, number>;

interface Point {
  step: number;
  sums: Map<string, number>;
  counts: Map<string, number>;
  /** Seconds since the run's start at this point's last step (the running sum of time/total), if it logs one. */
  clock?: number;
  rows: number;
}

export interface FoldedRows {
  rows: Row[];
  /** Rows read (steps logged), however many points they fold into. */
  stepsLogged: number;
  /** The last finite value of each metric. */
  last: Row;
  /** The run's clock at each point that has one: steps and seconds since its start. */
  clock: { steps: number[]; seconds: number[] };
}

export class RowBuckets {
  private readonly points: Point[] = [];
  /** Rows per point: doubles each time the points fill up. */
  private width = 1;
  private seen = 0;
  private elapsed = 0;
  private readonly last: Row = {};

  constructor(private readonly maxPoints = 2000) {
    if (maxPoints < 2) throw new Error(`maxPoints must be at least 2, got ${maxPoints}`);
  }

  add(row: Row): void {
    const step = row.step;
    if (step === undefined || !Number.isInteger(step)) return;
    this.seen++;
    const dt = row['time/total'];
    let open = this.points[this.points.length - 1];
    if (!open || open.rows >= this.width) {
      if (this.points.length >= this.maxPoints) this.halve();
      open = { step, sums: new Map(), counts: new Map(), rows: 0 };
      this.points.push(open);
    }
    open.step = Math.max(open.step, step);
    open.rows++;
    for (const [k, v] of Object.entries(row)) {
      if (k === 'step' || !Number.isFinite(v)) continue;
      open.sums.set(k, (open.sums.get(k) ?? 0) + v);
      open.counts.set(k, (open.counts.get(k) ?? 0) + 1);
      this.last[k] = v;
    }
    if (dt !== undefined && Number.isFinite(dt)) {
      this.elapsed += dt;
      open.clock = Math.round(this.elapsed * 1000) / 1000;
    }
  }

  /** Merges neighbouring points in pairs: each then stands for twice the steps. */
  private halve(): void {
    const merged: Point[] = [];
    for (let i = 0; i < this.points.length; i += 2) {
      const a = this.points[i]!;
      const b = this.points[i + 1];
      if (b) {
        for (const [k, v] of b.sums) a.sums.set(k, (a.sums.get(k) ?? 0) + v);
        for (const [k, n] of b.counts) a.counts.set(k, (a.counts.get(k) ?? 0) + n);
        a.step = Math.max(a.step, b.step);
        a.rows += b.rows;
        if (b.clock !== undefined) a.clock = b.clock;
      }
      merged.push(a);
    }
    this.points.splice(0, this.points.length, ...merged);
    this.width *= 2;
  }

  result(): FoldedRows {
    const rows: Row[] = [];
    const clock = { steps: [] as number[], seconds: [] as number[] };
    for (const p of [...this.points].sort((a, b) => a.step - b.step)) {
      const row: Row = { step: p.step };
      for (const [k, sum] of p.sums) row[k] = sum / p.counts.get(k)!;
      rows.push(row);
      if (p.clock !== undefined) {
        clock.steps.push(p.step);
        clock.seconds.push(p.clock);
      }
    }
    return { rows, stepsLogged: this.seen, last: { ...this.last }, clock };
  }
}
