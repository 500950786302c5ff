// A W&B run's transaction log on disk, written as the W&B SDK writes it: <root>/wandb/offline-run-<time>-<id>/
// run-<id>.wandb (online runs: run-<time>-<id>), so `wandb sync <dir>` uploads an offline one and
// `wandb leet inspect` shows either. One log per W&B run for the whole training run: after a crash or a
// continue-as-new the next writer finds it, cuts off a torn last record and appends only the steps it lacks.
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { appendSynced } from '../records/append-synced';
import { FILE_HEADER, frame, unframe } from './wandb-log-format';
import { decodeRecord, encodeRecord, items, type WandbRecord } from './wandb-records';
import type { StepRow } from './tensorboard';

export interface WandbRunSpec {
  /** The folder that gets the wandb/ directory (the run's logPath, as the cookbook's wandb.init(dir=log_path)). */
  root: string;
  id: string;
  project: string;
  entity: string | null;
  name: string;
  config: Record<string, unknown>;
  offline: boolean;
}

const stamp = (d: Date) => d.toISOString().replace(/[-:]/g, '').replace('T', '_').slice(0, 15);

/** The run's log file: the one already there for this id, else a new one. */
export function wandbLogFile(spec: WandbRunSpec): string {
  const wandbDir = path.join(path.resolve(spec.root), 'wandb');
  const prefix = spec.offline ? 'offline-run-' : 'run-';
  const existing = existsSync(wandbDir) ? readdirSync(wandbDir).filter((d) => d.startsWith(prefix) && d.endsWith(`-${spec.id}`)).sort() : [];
  const dir = path.join(wandbDir, existing[0] ?? `${prefix}${stamp(new Date())}-${spec.id}`);
  return path.join(dir, `run-${spec.id}.wandb`);
}

interface LogState {
  size: number;
  nextNum: number;
  steps: Set<number>;
  startSeconds: number;
  exited: boolean;
}

function scan(file: string): LogState {
  const buf = readFileSync(file);
  const { records, end } = unframe(buf);
  if (end < buf.length) truncateSync(file, end);
  const st: LogState = { size: end, nextNum: 1, steps: new Set(), startSeconds: Date.now() / 1000, exited: false };
  for (const raw of records) {
    const r = decodeRecord(raw);
    if (r.num !== undefined) st.nextNum = Math.max(st.nextNum, r.num + 1);
    if (r.history) st.steps.add(r.history.step?.num ?? 0);
    if (r.run) st.startSeconds = r.run.start_time.seconds;
    if (r.exit) st.exited = true;
  }
  return st;
}

function append(file: string, st: LogState, records: WandbRecord[]): void {
  const bytes = frame(records.map((r) => encodeRecord({ ...r, num: st.nextNum++ })), st.size);
  appendSynced(file, bytes);
  st.size += bytes.length;
}

// Per file: its size after our last write, so it is read again only when another process or a crash changed it.
const known = new Map<string, LogState>();

function open(spec: WandbRunSpec): { file: string; st: LogState } {
  const file = wandbLogFile(spec);
  const cached = known.get(file);
  if (cached && existsSync(file) && statSync(file).size === cached.size) return { file, st: cached };
  if (!existsSync(file) || statSync(file).size < FILE_HEADER.length) {
    mkdirSync(path.dirname(file), { recursive: true });
    const now = Date.now();
    const st: LogState = { size: 0, nextNum: 1, steps: new Set(), startSeconds: Math.floor(now / 1000), exited: false };
    writeFileSync(file, FILE_HEADER);
    st.size = FILE_HEADER.length;
    append(file, st, [
      { header: { version_info: { producer: 'agl-temporal' } } },
      {
        run: {
          run_id: spec.id,
          ...(spec.entity ? { entity: spec.entity } : {}),
          project: spec.project,
          display_name: spec.name,
          config: { update: items(spec.config) },
          start_time: { seconds: st.startSeconds, nanos: (now % 1000) * 1e6 },
        },
      },
    ]);
    known.set(file, st);
    return { file, st };
  }
  const st = scan(file);
  known.set(file, st);
  return { file, st };
}

/** Appends a history record (one W&B step per training step) for each row the log lacks. Returns those steps. */
export function appendWandbSteps(spec: WandbRunSpec, rows: StepRow[]): number[] {
  const { file, st } = open(spec);
  const todo = rows.filter((r) => !st.steps.has(r.step));
  if (todo.length === 0) return [];
  const now = Date.now() / 1000;
  const records: WandbRecord[] = todo.map(({ step, ...metrics }) => ({
    history: { item: items({ ...metrics, _step: step, _timestamp: now, _runtime: now - st.startSeconds }), step: { num: step } },
  }));
  const { step: _s, ...last } = todo[todo.length - 1]!;
  records.push({ summary: { update: items(last) } });
  append(file, st, records);
  for (const r of todo) st.steps.add(r.step);
  return todo.map((r) => r.step);
}

/** Marks the run as ended (exit code 0) once; `wandb sync` then shows it finished. */
export function finishWandbLog(spec: WandbRunSpec): void {
  const { file, st } = open(spec);
  if (st.exited) return;
  append(file, st, [{ exit: { exit_code: 0, runtime: Math.round(Date.now() / 1000 - st.startSeconds) } }]);
  st.exited = true;
}
