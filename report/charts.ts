// Which plots a report has and what each one draws, as plain data: one x axis (steps) per plot, one series per
// metric and run, aligned to the x axis with null where a run has no value (evaluation steps, say). The page
// (page.js) only draws what this decides, so everything that needs judgement is here and unit-tested.
import type { Row, RunData } from './run-data';

export interface Series {
  label: string;
  run: string;
  /** The metric's label without the run's name. */
  metric: string;
  color: string;
  /** Line dash (canvas setLineDash), for telling metrics apart when colours tell runs apart. */
  dash: number[];
  /** Sparse series (evaluation) are drawn with points and joined across the gaps. */
  points: boolean;
  /** The metrics.jsonl keys it is drawn from (the page's legend shows them on hover). */
  keys: string[];
  values: (number | null)[];
}

export interface Marker {
  x: number;
  label: string;
  /** The run's colour when several runs share the plot. */
  color: string;
  run: string;
}

/** Per run: seconds since its start at the end of each logged step (the sum of `time/total`), for a time axis. */
export type Clocks = Record<string, { steps: number[]; seconds: number[] }>;

export interface Chart {
  id: string;
  title: string;
  /** Stacked bars of non-negative parts (time per step); values are the parts, the page stacks them. */
  stacked: boolean;
  x: number[];
  series: Series[];
  markers: Marker[];
  note?: string;
}

const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];
export const DASHES: number[][] = [[], [6, 4], [2, 3], [8, 3, 2, 3], [12, 4], [2, 6]];

interface Pick {
  label: string;
  keys: string[];
  value: (r: Row, run?: RunData) => number | undefined;
  points?: boolean;
}

const key = (k: string, label = k, points = false): Pick => ({ label, keys: [k], value: (r) => r[k], points });
const keysMatching = (runs: RunData[], re: RegExp): Pick[] =>
  [...new Set(runs.flatMap((r) => r.rows.flatMap(Object.keys)))]
    .filter((k) => re.test(k))
    .sort()
    .map((k) => key(k));

/** The time of a step that none of the timed phases account for: Temporal round trips, publishing, logging. */
export function orchestrationSeconds(r: Row): number | undefined {
  const total = r['time/total'];
  if (total === undefined) return undefined;
  const parts = TIME_PARTS.slice(0, -1).reduce((s, p) => s + (p.value(r) ?? 0), 0);
  return Math.max(0, total - parts);
}

const TIME_PARTS: Pick[] = [
  key('time/run_evals', 'evaluation'),
  { label: 'sampling', keys: ['time/sample', 'async/time_waiting_for_groups'], value: (r) => r['time/sample'] ?? r['async/time_waiting_for_groups'] },
  key('time/train', 'training'),
  key('time/save_checkpoint', 'checkpointing'),
  { label: 'orchestration (the rest)', keys: ['time/total'], value: orchestrationSeconds },
];

/** Every plot of a report on these runs (several runs: one curve each, overlaid). */
export function buildCharts(runs: RunData[]): Chart[] {
  const charts: Chart[] = [
    chart(runs, 'reward', 'Reward (mean total per episode)', [key('env/all/reward/total', 'train'), key('test/env/all/reward/total', 'eval', true)]),
    chart(runs, 'loss', 'Loss', keysMatching(runs, /^optim\/.*loss/)),
    { ...chart(runs, 'kl', 'KL diagnostics', keysMatching(runs, /^(optim|env\/all)\/.*kl(?!.*mismatched)/)), ...klNote(runs) },
    chart(runs, 'entropy', 'Entropy of sampled tokens', [key('optim/entropy', 'entropy')]),
    chart(runs, 'tokens', 'Tokens per turn', [key('env/all/ac_tokens_per_turn', 'sampled (action)'), key('env/all/ob_tokens_per_turn', 'prompt (observation)')]),
    chart(runs, 'rollouts', 'Rollout outcomes (fraction of the step’s rollouts)', [
      key('env/all/by_group/frac_status_succeeded', 'succeeded'),
      key('env/all/by_group/frac_status_failed', 'failed (incl. timed out)'),
      key('env/all/by_group/frac_status_cancelled', 'cancelled'),
      key('env/all/by_group/frac_status_others', 'other'),
      { label: 'no reward', keys: ['env/all/reward/not_null'], value: (r) => (r['env/all/reward/not_null'] === undefined ? undefined : 1 - r['env/all/reward/not_null']) },
    ]),
    chart(runs, 'grad-norm', 'Gradient norm', keysMatching(runs, /^(optim\/)?grad_norm/)),
    chart(runs, 'group-mix', 'Group mix (fraction of the step’s groups)', [
      key('env/all/by_group/frac_mixed', 'mixed (rewards differ: a learning signal)'),
      key('env/all/by_group/frac_all_good', 'all good'),
      key('env/all/by_group/frac_all_bad', 'all bad'),
      key('env/all/by_group/frac_empty_traj', 'empty trajectories'),
    ]),
    { ...chart(runs, 'lr', 'Learning rate (markers: settings changed by configure)', [key('optim/lr', 'learning rate')]), markers: configuredMarkers(runs) },
  ];
  if (runs.some((r) => r.rows.some((row) => row['async/staleness_mean'] !== undefined))) {
    charts.push(
      chart(runs, 'staleness', 'Staleness (policy steps between sampling and training)', [
        key('async/staleness_mean', 'mean'),
        key('async/staleness_max', 'max'),
        key('async/staleness_min', 'min'),
        { label: 'bound (maxStepsOffPolicy)', keys: [], value: (r, run) => (r['async/staleness_max'] === undefined ? undefined : boundOf(run)) },
      ]),
    );
  }
  // Stacked parts of several runs would hide each other: one time plot per run.
  for (const run of runs) {
    const c = chart([run], runs.length > 1 ? `time-${run.name}` : 'time', `Time per step, s${runs.length > 1 ? ` (${run.name})` : ''}`, TIME_PARTS);
    charts.push({ ...c, stacked: true, note: 'orchestration = step time minus the timed phases: Temporal round trips, publishing the policy, logging' });
  }
  charts.push(...restCharts(runs, new Set(charts.flatMap((c) => c.series.flatMap((s) => s.keys)))));
  return charts.filter((c) => c.series.length > 0);
}

/**
 * Why the KL lines look as they do. kl_sample_train compares the sampler's logprobs of the sampled tokens with the
 * trainer's: a synchronous run samples every batch with the weights it then trains (on-policy), so it is ~0 and flat
 * by design; an async run samples up to maxStepsOffPolicy steps behind, so it grows with staleness.
 */
function klNote(runs: RunData[]): { note?: string } {
  const isAsync = (r: RunData) => r.config.async !== null && r.config.async !== undefined;
  const sync = runs.filter((r) => !isAsync(r));
  const notes: string[] = [];
  if (sync.length > 0) {
    const which = runs.length > 1 ? ` (${sync.map((r) => r.name).join(', ')})` : '';
    notes.push(
      `kl_sample_train: the trainer's logprobs of the sampled tokens against the sampler's. A synchronous run${which} samples on-policy: ` +
        'each batch is sampled with the very weights the trainer then trains, so sampler and trainer agree and KL ~0 (flat lines at 0) is expected; ' +
        'well above 0 would mean they disagree (renderer, tokenizer or numerics).',
    );
  }
  if (sync.length < runs.length) notes.push('An async run samples off-policy (up to maxStepsOffPolicy steps behind), so its kl_sample_train is above 0 and grows with staleness.');
  return notes.length ? { note: notes.join(' ') } : {};
}

/** Keys that are bookkeeping rather than a measurement: the x axis itself. */
const NOT_PLOTTED = new Set(['step', 'progress/batch']);

/**
 * Every numeric metric no plot above draws, grouped by its prefix (the path before the last `/`): a run that
 * logs something new gets a plot of it without a change here.
 */
function restCharts(runs: RunData[], drawn: Set<string>): Chart[] {
  const groups = new Map<string, string[]>();
  for (const k of [...new Set(runs.flatMap((r) => r.rows.flatMap(Object.keys)))].sort()) {
    if (drawn.has(k) || NOT_PLOTTED.has(k)) continue;
    const prefix = k.includes('/') ? k.slice(0, k.lastIndexOf('/')) : 'other';
    groups.set(prefix, [...(groups.get(prefix) ?? []), k]);
  }
  return [...groups].map(([prefix, keys]) => chart(runs, `more-${prefix.replace(/[^a-z0-9]+/gi, '-')}`, `More: ${prefix}`, keys.map((k) => key(k))));
}

/** Seconds since each run's start at the end of each step: the running sum of its step times (row-buckets.ts). */
export function runClocks(runs: RunData[]): Clocks {
  return Object.fromEntries(runs.map((run) => [run.name, run.folded.clock]));
}

function boundOf(run: RunData | undefined): number | undefined {
  const a = run?.config.async as { maxStepsOffPolicy?: number } | null | undefined;
  return a?.maxStepsOffPolicy;
}

function configuredMarkers(runs: RunData[]): Marker[] {
  return runs.flatMap((run, ri) => {
    const out: Marker[] = [];
    let before = '{}';
    for (const c of run.configured) {
      const now = JSON.stringify(c.changes);
      if (now !== before) {
        const text = Object.entries(c.changes).map(([k, v]) => `${k}=${v}`).join(' ');
        out.push({
          x: c.step,
          label: `${runs.length > 1 ? `${run.name}: ` : ''}${text || 'back to the config'}`,
          color: runs.length > 1 ? PALETTE[ri % PALETTE.length]! : '#333',
          run: run.name,
        });
      }
      before = now;
    }
    return out;
  });
}

function chart(runs: RunData[], id: string, title: string, picks: Pick[]): Chart {
  const x = [...new Set(runs.flatMap((r) => r.rows.map((row) => row.step!)))].sort((a, b) => a - b);
  const series: Series[] = [];
  runs.forEach((run, ri) => {
    const byStep = new Map(run.rows.map((row) => [row.step!, row]));
    let drawn = 0;
    picks.forEach((p, pi) => {
      const values = x.map((step) => {
        const row = byStep.get(step);
        const v = row ? p.value(row, run) : undefined;
        return v === undefined || !Number.isFinite(v) ? null : v;
      });
      if (values.every((v) => v === null)) return;
      const many = runs.length > 1;
      series.push({
        label: many ? `${run.name} ${p.label}` : p.label,
        run: run.name,
        metric: p.label,
        // Several runs: a colour per run, a dash per metric (train solid, eval dashed, ...). One run: a colour per metric.
        color: PALETTE[(many ? ri : pi) % PALETTE.length]!,
        dash: many ? DASHES[drawn++ % DASHES.length]! : [],
        points: p.points === true,
        keys: p.keys,
        values,
      });
    });
  });
  return { id, title, stacked: false, x, series, markers: [] };
}
