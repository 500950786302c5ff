// `npm run bench -- fair-share [--runners 8] [--backlog 300] [--work-ms 40] [--weights 1,3] [--json F]`: two runs
// share one runner fleet through the store (its own process, over HTTP). Each run queues a backlog of rollouts
// marked as a training run marks them (agl_run, agl_fleet_weight); the first run's whole backlog is queued before
// the second's, so first come first served would give the second run nothing until the first is drained. A fleet
// of runner loops takes one rollout at a time, works `--work-ms` on it (a stand-in for the agent) and reports it
// succeeded. While both runs have rollouts queued, how many each got done: the ratio should be the weights'.
// This measures the store's sharing alone: no proxy, trainer or Temporal (those add no queueing of their own).
import { StoreClient } from '../../store/client';
import { flag, startStoreProcess, stringFlag, writeResult } from './bench-kit';

async function main(args: string[]): Promise<void> {
  const runners = flag(args, 'runners', 8);
  const backlog = flag(args, 'backlog', 300);
  const workMs = flag(args, 'work-ms', 40);
  const weights = (stringFlag(args, 'weights') ?? '1,3').split(',').map(Number);
  if (weights.length !== 2 || weights.some((w) => !(w > 0))) throw new Error('--weights takes two positive numbers, e.g. 1,3');
  const runs = ['run-a', 'run-b'];
  const store = await startStoreProcess('normal');
  try {
    const client = new StoreClient(store.url);
    for (const [i, run] of runs.entries()) {
      const meta = { agl_run: run, ...(weights[i] !== 1 ? { agl_fleet_weight: weights[i]! } : {}) };
      for (let k = 0; k < backlog; k += 100) {
        await client.enqueueRollouts(Array.from({ length: Math.min(100, backlog - k) }, (_, j) => ({ input: { run, i: k + j }, metadata: meta })));
      }
    }
    const done = new Map(runs.map((r) => [r, 0]));
    let window: Map<string, number> | null = null; // counts when the first run ran out of queued rollouts
    const started = performance.now();
    let windowMs = 0;
    const loop = async (id: string) => {
      for (;;) {
        const [r] = await client.dequeueRollouts(1, id);
        if (!r) return;
        await new Promise((res) => setTimeout(res, workMs));
        await client.updateAttempt(r.rollout_id, r.attempt.attempt_id, { status: 'succeeded' });
        const run = (r.input as { run: string }).run;
        done.set(run, done.get(run)! + 1);
        // The window closes when either run has had every rollout handed out (its queue is empty).
        if (!window && [...done.values()].some((n) => n >= backlog - runners)) {
          window = new Map(done);
          windowMs = performance.now() - started;
        }
      }
    };
    await Promise.all(Array.from({ length: runners }, (_, i) => loop(`runner-${i}`)));
    const w = window ?? done;
    const a = w.get('run-a')!;
    const b = w.get('run-b')!;
    const ratio = b / a;
    const want = weights[1]! / weights[0]!;
    const result = { runners, backlog, workMs, weights, windowSeconds: windowMs / 1000, doneInWindow: Object.fromEntries(w), ratio, want, withinPct: (Math.abs(ratio - want) / want) * 100 };
    process.stdout.write(
      `fair-share: ${runners} runners, ${backlog} rollouts queued per run (run-a first), ${workMs} ms each, weights ${weights.join(':')}\n` +
        `while both had rollouts queued (${(windowMs / 1000).toFixed(1)} s): run-a ${a} done, run-b ${b} done: ratio ${ratio.toFixed(2)} ` +
        `(weights ask ${want.toFixed(2)}; off by ${result.withinPct.toFixed(1)}%; first come first served would give run-b 0)\n`,
    );
    writeResult(args, result);
  } finally {
    await store.close();
  }
}

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
