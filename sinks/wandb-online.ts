// Streams a run's steps to W&B as they are logged, through the official JavaScript SDK in a child process
// (wandb-stream-child.ts). One stream per W&B run per worker process; a new stream (another worker, a restart)
// sends every row from step 0 again, so the run's history ends with each step once.
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { StepRow } from './tensorboard';
import type { WandbRunSpec } from './wandb-local-run';
import { setTimeout as sleep } from 'node:timers/promises';

interface Stream {
  child: ChildProcess;
  nextStep: number;
  error: string | null;
}

const ROOT = path.resolve(__dirname, '..');
const streams = new Map<string, Stream>();

function start(spec: WandbRunSpec): Stream {
  // Explicit execArgv: the parent's may hold flags meant for it alone (--test, say).
  const child = fork(path.join(__dirname, 'wandb-stream-child.ts'), [], { cwd: ROOT, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const s: Stream = { child, nextStep: 0, error: null };
  child.on('message', (m: { error?: string }) => {
    if (m.error) s.error = m.error;
  });
  child.on('exit', (code) => {
    if (streams.get(spec.id) === s) streams.delete(spec.id);
    if (code !== 0) console.warn(`W&B stream of ${spec.name} (${spec.id}) ended with code ${code}${s.error ? `: ${s.error}` : ''}; the next step starts a new one`);
  });
  // A worker that exits does not wait for its streams.
  child.unref();
  child.channel?.unref();
  child.send({ init: { id: spec.id, project: spec.project, entity: spec.entity, name: spec.name, config: spec.config } });
  streams.set(spec.id, s);
  return s;
}

/** Sends the rows the stream has not sent yet (all of them to a new stream). `rows` are every row of the run. */
export function streamWandbSteps(spec: WandbRunSpec, rows: StepRow[]): void {
  const s = streams.get(spec.id) ?? start(spec);
  const todo = rows.filter((r) => r.step >= s.nextStep).sort((a, b) => a.step - b.step);
  if (todo.length === 0) return;
  s.child.send({ rows: todo });
  s.nextStep = todo[todo.length - 1]!.step + 1;
}

/** Marks the W&B run finished and waits for the stream to flush (at most `timeoutMs`). */
export async function finishWandbStream(spec: WandbRunSpec, rows: StepRow[], timeoutMs = 60_000): Promise<void> {
  streamWandbSteps(spec, rows);
  const s = streams.get(spec.id);
  if (!s) return;
  const exited = new Promise<void>((resolve) => s.child.once('exit', () => resolve()));
  // Waited for: keep this process up until the stream has flushed.
  s.child.ref();
  s.child.channel?.ref();
  s.child.send({ finish: true });
  await Promise.race([exited, sleep(timeoutMs, undefined, { ref: false })]);
}
