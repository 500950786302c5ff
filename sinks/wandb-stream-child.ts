// A child process that streams one W&B run with the official JavaScript SDK (@wandb/sdk). It runs apart from
// the worker because the SDK throws from its event handlers when the W&B service fails (which would take the
// worker down) and installs SIGINT/SIGTERM handlers that call process.exit.
// Messages from the parent: {init: {...}}, {rows: [...]}, {finish: true}. Rows must come in step order from
// step 0: the SDK numbers history lines from 0 in every new process, so the parent sends every row again after
// a restart and line i is step i again (W&B's file stream writes a line at its offset; nothing is duplicated).
import wandb from '@wandb/sdk';

type Msg = { init: { id: string; project: string; entity: string | null; name: string; config: Record<string, unknown> } } | { rows: Record<string, number>[] } | { finish: true };

let run: Awaited<ReturnType<typeof wandb.init>> | undefined;
const queue: Msg[] = [];
let busy = false;

async function handle(m: Msg): Promise<void> {
  if ('init' in m) {
    const { id, project, entity, name, config } = m.init;
    run = await wandb.init({ id, project, ...(entity ? { entity } : {}), name, config });
  } else if ('rows' in m) {
    for (const { step, ...metrics } of m.rows) run!.log({ ...metrics }, step);
  } else {
    await run?.finish();
    process.exit(0);
  }
}

process.on('message', (m: Msg) => {
  queue.push(m);
  if (busy) return;
  busy = true;
  void (async () => {
    try {
      while (queue.length) await handle(queue.shift()!);
    } catch (err) {
      process.send?.({ error: (err as Error).message });
      process.exit(1);
    } finally {
      busy = false;
    }
  })();
});
// The worker went away: end the W&B run's stream without marking it finished (the run goes on elsewhere).
process.on('disconnect', () => process.exit(0));
