// docs/benchmarks.md from one `npm run bench` (all.ts): a summary of every comparison against issue 13's targets,
// then each bench's own table. The "before" figures are fixed: the same benches run on commit 6376fbf (before the
// changes they measure), on this machine, in separate runs.
/* eslint-disable @typescript-eslint/no-explicit-any */

/** The machine's load while one bench ran: /proc/loadavg at its start and end, the 1-minute figure's max and mean. */
export interface LoadDuring {
  start: string;
  end: string;
  max: number;
  mean: number;
  samples: number;
}

export interface BenchRun {
  id: string;
  command: string;
  seconds: number;
  exitCode: number | null;
  result: any;
  /** The commit the bench ran at (HEAD when it started). */
  commit?: string;
  load?: LoadDuring;
}

const BEFORE = {
  commit: '6376fbf',
  storeLoad: 'ours 126.5 rollouts/s, 1.90 CPU ms/rollout; agl 53.3 rollouts/s, 12.45 CPU ms/rollout (2,000 rollouts, 32 runners, no warm-up then): 2.4x, 0.15x',
  scoped: 'calls 1-20 23.6 ms, calls 281-300 89.3 ms (3.79x); 64 clients x 50 turns 122.7 req/s (issue 13: 19-23 req/s with longer attempts)',
  history: '16 rollouts 11.6 KiB, 256: 27.0 KiB, 1,024: 76.3 KiB, 4,096: 273.6 KiB per batch (23.5x)',
  firstStart: 'base model built at every first start: 194 s on an idle machine (issue 13); 166-201 s from npm start to the summary (README)',
};

const f = (x: unknown, digits = 1) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(digits) : '-');
const kib = (b: number) => `${(b / 1024).toFixed(1)} KiB`;
const yes = (ok: boolean | null) => (ok === null ? 'not measured' : ok ? 'met' : '**not met**');

function summary(by: Map<string, any>): string[] {
  const lines = ['| figure | this run | target (issue 13) | | before (6376fbf) |', '| --- | --- | --- | --- | --- |'];
  const sl = by.get('store-load');
  const sll = by.get('store-load-large');
  for (const [name, s] of [['store-load, 2,000 rollouts, 32 runners', sl], ['store-load, 4,000 rollouts, 64 runners', sll]] as const) {
    if (!s?.ratios) continue;
    lines.push(`| ${name}: ours / agl 0.3 throughput | ${f(s.ratios.throughput)}x | ≥ 10x | ${yes(s.ratios.throughput >= 10)} | ${name.includes('2,000') ? '2.4x' : '-'} |`);
    lines.push(`| ${name}: ours / agl 0.3 store CPU per rollout | ${f(s.ratios.cpuPerRollout, 3)}x | ≤ 0.1x | ${yes(s.ratios.cpuPerRollout <= 0.1)} | ${name.includes('2,000') ? '0.15x' : '-'} |`);
  }
  const sc = by.get('proxy-scoped');
  if (sc) {
    lines.push(`| scoped route, one attempt: mean of calls ${sc.calls - 19}-${sc.calls} / calls 1-20 | ${f(sc.ratio, 2)}x (${f(sc.lastMs)} / ${f(sc.firstMs)} ms) | ≤ 1.5x | ${yes(sc.ratio <= 1.5)} | 3.79x (89.3 / 23.6 ms) |`);
    lines.push(`| scoped route, ${sc.clients} clients x ${sc.turns} turns (spans in a real store) | ${f(sc.rps, 0)} req/s: ${f(sc.rps / 23, 0)}-${f(sc.rps / 19, 0)}x issue 13's 19-23, ${f(sc.rps / 122.7)}x this bench on 6376fbf | ≥ 10x today's 19-23 req/s (≥ 230) | ${yes(sc.rps >= 230)} | 122.7 req/s |`);
  }
  const h = by.get('history-growth');
  if (h) lines.push(`| history bytes per batch, ${h.rows.at(-1).rollouts} / ${h.rows[0].rollouts} rollouts | ${f(h.ratio, 2)}x (${kib(h.rows.at(-1).bytesPerBatch)} / ${kib(h.rows[0].bytesPerBatch)}) | ≤ 1.5x | ${yes(h.ratio <= 1.5)} | 23.5x (273.6 / 11.6 KiB) |`);
  const fs = by.get('first-start');
  if (fs) lines.push(`| first npm start of a fresh clone: batch 1 reached | ${f(fs.batch1, 0)} s | ≤ 90 s (idle 2 cores) | ${yes(fs.batch1 === null ? false : fs.batch1 <= 90)} | over 194 s (base build alone) |`);
  const o = by.get('orchestration');
  const a = by.get('async');
  if (a) lines.push(`| async speedup to train reward 0.8 (2 s median, ppo/ppo, pace) | ${a.speedup ? `${f(a.speedup, 2)}x` : 'n/a'} | ≥ 2x (issue 21) | ${yes(a.speedup ? a.speedup >= 2 : false)} | 2.24x quiet, 1.39x loaded (issue 21, old arms) |`);
  if (o) lines.push(`| orchestration share of a real batch | ${f(100 * o.minShare)}-${f(100 * o.maxShare)}% (mean ${f(o.meanOverheadMs, 0)} ms of ${f(o.meanWallS, 2)} s) | (reported) | | 1.3-2.2% (issue 13) |`);
  return lines;
}

function storeLoad(s: any): string[] {
  const lines = [`${s.rollouts} rollouts (after ${s.warmup ?? 0} not measured), ${s.runners} TS runners (one process), trivial agent; both stores in one run, load average ${s.load}.`, '',
    '| store | rollouts/s | p50 / p99 enqueue→done (ms) | store CPU s | CPU ms/rollout | runner process CPU s | lost | duplicated |', '| --- | --- | --- | --- | --- | --- | --- | --- |'];
  for (const r of s.results) lines.push(`| ${r.store} | ${f(r.perSecond)} | ${f(r.p50, 0)} / ${f(r.p99, 0)} | ${f(r.storeCpuSec)} | ${f((r.storeCpuSec * 1000) / r.rollouts, 2)} | ${f(r.runnerCpuSec)} | ${r.lost} | ${r.duplicated} |`);
  return lines;
}

function harness(s: any): string[] {
  const lines = [`\`benchmark_store.py --mode batch --total-tasks ${s.tasks} --batch-size ${s.tasks} --n-runners ${s.runners} --max-rounds ${s.rounds} --sleep-seconds ${s.sleep}\` (agl's own Python runners and client), load average ${s.load}.`, '',
    '| store | rollouts/s | store CPU ms/rollout | store busy (share of one core) |', '| --- | --- | --- | --- |'];
  for (const r of s.results) lines.push(`| ${r.store} | ${f(r.perSecond)} | ${f(r.cpuMsPerRollout, 2)} | ${f(100 * r.storeBusy, 0)}% |`);
  return lines;
}

function litellm(s: any): string[] {
  const lines = ['| proxy | clients | req/s | mean ms | p50 ms | p99 ms |', '| --- | --- | --- | --- | --- | --- |'];
  for (const r of s.rows) lines.push(`| ${r.proxy} | ${r.clients} | ${f(r.result.rps, 0)} | ${f(r.result.mean, 2)} | ${f(r.result.p50, 2)} | ${f(r.result.p99, 2)} |`);
  return lines;
}

function history(s: any): string[] {
  const lines = ['| rollouts per batch | tasks x group | history per batch | events per batch | collectRollouts result | trainStep input |', '| --- | --- | --- | --- | --- | --- |'];
  for (const r of s.rows) lines.push(`| ${r.rollouts} | ${r.batchSize} x ${r.rollouts / r.batchSize} | ${kib(r.bytesPerBatch)} | ${r.eventsPerBatch} | ${r.collectResultBytes} B | ${r.trainInputBytes} B |`);
  return lines;
}

export function renderReport(x: { runs: BenchRun[]; started: Date; commit: string; machine: string }): string {
  const by = new Map(x.runs.map((r) => [r.id, r.result]));
  const section = (id: string, title: string, body: (r: any) => string[], note = '') => {
    const run = x.runs.find((r) => r.id === id);
    if (!run) return [];
    const where = `${run.commit ? ` at commit ${run.commit}` : ''}${run.load ? `; load (1 min) ${run.load.start.split(' ')[0]} at the start, max ${f(run.load.max, 2)}, mean ${f(run.load.mean, 2)}, ${run.load.end.split(' ')[0]} at the end` : ''}`;
    const head = [`## ${title}`, '', `\`${run.command}\` (${f(run.seconds, 0)} s${run.exitCode === 0 ? '' : `, exit ${run.exitCode}`}${where})`, ''];
    return [...head, ...(run.result ? body(run.result) : ['The bench failed before reporting; its output above says why.']), ...(note ? ['', note] : []), ''];
  };
  const sc = by.get('proxy-scoped');
  const o = by.get('orchestration');
  const fs = by.get('first-start');
  return [
    '# Benchmarks',
    '',
    `Made by \`npm run bench\` (test/bench/all.ts) on ${x.started.toISOString().slice(0, 16).replace('T', ' ')} UTC at commit ${x.commit}, in one run on ${x.machine}.`,
    'The machine is shared with other work, so figures move from run to run; ratios measured within one bench (both stores, both proxies) are the steadier ones.',
    '`npm run bench -- <name> [args]` runs one of them; each file in test/bench/ says what it measures.',
    '',
    '## Summary',
    '',
    ...summary(by),
    '',
    `Before, for context (the same benches on commit ${BEFORE.commit}, separate runs): store-load ${BEFORE.storeLoad}; scoped route ${BEFORE.scoped}; history ${BEFORE.history}; first start: ${BEFORE.firstStart}.`,
    '',
    ...section('store-load', 'Store: store-load, ours against agl 0.3 (issue 13 setting)', storeLoad),
    ...section('store-load-large', 'Store: store-load, more rollouts and runners', storeLoad),
    ...section('agl-harness', "Store: agl's own benchmark_store.py (v0.3.0)", harness,
      'Its Python runners (n processes, OTel spans with random nested attributes) need far more CPU per rollout than either store, so on 2 cores they, not the store, set the pace; the store CPU per rollout and the share of a core each store used are the comparable figures.'),
    ...section('proxy-litellm', 'Proxy: the OpenAI route against LiteLLM (both without a model)', litellm),
    ...section('proxy-scoped', 'Proxy: the rollout-scoped route (spans in a real store)', () => [
      `One attempt, ${sc.calls} calls one after another (same-size turns): mean of calls 1-20 ${f(sc.firstMs)} ms, of calls ${sc.calls - 19}-${sc.calls} ${f(sc.lastMs)} ms (${f(sc.ratio, 2)}x).`,
      '',
      `${sc.clients} clients at once, ${sc.turns} turns each on its own attempt: ${f(sc.rps, 0)} requests/s, mean ${f(sc.meanMs)} ms, p99 ${f(sc.p99Ms)} ms${sc.errors ? `, ${sc.errors} errors` : ''}. Load average ${sc.load}.`,
    ]),
    ...section('history-growth', 'Temporal history per batch, 16 to 4,096 rollouts', history),
    ...section('orchestration', 'Orchestration overhead of a real run', () => [
      `The hello example, ${o.batches} batches (16 tasks x 4 rollouts, local trainer) on a whole stack: a batch took ${f(o.meanWallS, 2)} s on average, of which ${f(o.meanOverheadMs, 0)} ms were not spent inside an activity (scheduling, dispatch, workflow tasks): ${f(100 * o.minShare)}-${f(100 * o.maxShare)}% per batch, mean ${f(100 * o.meanShare)}%. Load average ${o.load}.`,
    ]),
    ...section('async', 'Async against synchronous training (every arm in docs/async-bench.md)', (r) => [
      `${r.headline}. Each arm's figures are in [docs/async-bench.md](async-bench.md), written by the same run.`,
    ]),
    ...section('first-start', 'First npm start of a fresh clone', () => [
      `A clone of HEAD with node_modules in place and nothing else (the Temporal CLI provisioned, the base model taken from the shipped weights): batch 0 began at ${f(fs.batch0)} s, batch 1 at ${f(fs.batch1)} s after \`npm start\`${fs.total ? `; the whole run took ${f(fs.total, 0)} s` : ''}. Load average ${fs.load}.`,
      ...(fs.rewards ? ['', `Train reward per batch: \`${fs.rewards.join(' ')}\` (the README's curve).`] : []),
    ]),
  ].join('\n');
}
