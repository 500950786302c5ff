// What an async run must leave behind however it was hit. Its batches depend on timing, so it is not compared with
// a fault-free run; instead: every optimizer step applied exactly once (one committed record per step, each
// built on the one before, the final Adam step count equal to the steps that trained), no group trained twice or
// lost (every dataset group trained once, or counted as dropped or failed), staleness within the bound as the
// proxy served each group (its spans' policy steps, test/helpers/served-staleness.ts; the run's own
// async/staleness_* and labels only as cross-checks), and one metrics row per step (plus the final evaluation's).
import { readJsonl, runPaths } from '../../records/run-files';
import { stepRecordsOf } from '../helpers/run-records';
import type { TrainingRunResult } from '../../workflows/run-types';
import { weightsOf } from './harness';
import { servedGroupsOf, servedStalenessViolations } from '../helpers/served-staleness';

export interface AsyncOutcome {
  steps: number;
  stalenessMax: number;
  resampled: number;
  /** Broken invariants; empty when the run is sound. */
  violations: string[];
}

export async function asyncOutcomeOf(trainerDataDir: string, storeUrl: string, runName: string, logPath: string, totalGroups: number, bound: number, result: TrainingRunResult): Promise<AsyncOutcome> {
  const paths = runPaths(logPath);
  const violations: string[] = [];
  const check = (ok: boolean, what: string) => {
    if (!ok) violations.push(what);
  };

  // From the store, where step records live (the initial policy's record left out).
  const records = await stepRecordsOf(storeUrl, runName);
  check(records.length === result.batchesCompleted, `${records.length} step records for ${result.batchesCompleted} steps`);
  records.forEach((r, i) => {
    check(r.result.state.step === i + 1, `record ${i + 1} is step ${r.result.state.step}`);
    if (i > 0) check(r.parentStatePath === records[i - 1]!.result.state.statePath, `step ${i + 1} was not built on step ${i}'s state`);
  });

  const trained = records.flatMap((r) => r.groups ?? []).map((k) => Number(/^g(\d+)r\d+$/.exec(k)?.[1] ?? -1));
  const seen = new Set<number>();
  for (const g of trained) {
    check(g >= 0 && g < totalGroups, `trained an unknown group ${g}`);
    check(!seen.has(g), `group ${g} trained twice`);
    seen.add(g);
  }
  const c = result.asyncCounts;
  check(c !== undefined, 'the run reports its group counts');
  if (c) {
    check(c.trained === trained.length, `the run counts ${c.trained} trained groups, the step records ${trained.length}`);
    const filtered = c.constantReward ?? 0;
    check(trained.length + c.droppedStale + c.failed + filtered === totalGroups, `trained ${trained.length} + dropped ${c.droppedStale} + failed ${c.failed} + constant ${filtered} != ${totalGroups} groups: some lost`);
  }

  // Rows for every step, then possibly one more: the evaluation of the final policy (test/* metrics only).
  const rows = readJsonl(paths.metrics);
  const metrics = rows.filter((m) => Number(m.step) < records.length);
  check(
    JSON.stringify(metrics.map((m) => m.step)) === JSON.stringify(records.map((_, i) => i)),
    `metrics rows for steps ${JSON.stringify(rows.map((m) => m.step))}`,
  );
  check(rows.length - metrics.length <= 1, `${rows.length - metrics.length} rows after the last step`);
  const served = await servedGroupsOf(storeUrl, runName);
  violations.push(...servedStalenessViolations(served, bound));
  const stalenessMax = Math.max(0, ...served.map((g) => g.staleness ?? 0));
  // The run's own figures must agree with the spans: the same maximum, no group mislabelled.
  const reportedMax = Math.max(0, ...metrics.map((m) => Number(m['async/staleness_max'] ?? 0)));
  check(reportedMax === stalenessMax, `the run reports staleness max ${reportedMax}, the spans say ${stalenessMax}`);
  const mislabelled = metrics.reduce((n, m) => n + Number(m['async/groups_mislabelled'] ?? 0), 0);
  check(mislabelled === 0, `${mislabelled} groups mislabelled`);

  const final = readJsonl(paths.checkpoints).find((row) => row.name === 'final');
  check(final !== undefined, 'a final checkpoint row');
  if (final) {
    const applied = records.filter((r) => !r.result.skipped).length;
    const { adamStep } = weightsOf(trainerDataDir, String(final.state_path));
    check(adamStep === applied, `final Adam step ${adamStep} != ${applied} steps that trained (a step applied twice or lost)`);
  }
  return { steps: records.length, stalenessMax, resampled: c?.resampled ?? 0, violations };
}
