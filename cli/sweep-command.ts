// `client sweep <run.json> --grid key=v1,v2 [--grid ...] [--seeds N] [--max-parallel N] [--early-stop 2,4]`:
// checks the flags and every child's config before anything starts, then starts the sweep workflow
// (workflows/sweep.ts). `client sweep-status <sweep>` prints its children and ranking; `client report <sweep>`
// draws every child (the sweep's children are derived from its start input, so a finished sweep is enough).
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { z } from 'zod';
import { closestName, ConfigError, plainMessage, WITH_INPUT } from '../config/errors';
import { validateRunConfig } from '../config/load';
import { RunConfigSchema, type RunConfig } from '../config/run-config';
import { SWEEP } from '../shared/search-attributes';
import { sweepChildren, sweepWorkflowId, type GridValue, type SweepChild, type SweepInput, type SweepResult } from '../shared/sweep-plan';
import type { sweep } from '../workflows/sweep';
import { sweepProgressQuery } from '../workflows/sweep';
import { CommandError } from './mistakes';

/** Keys a grid may not set: the sweep names its children and their files. */
const RESERVED = ['runName', 'logPath', 'forkOf'];

const Count = (flag: string) =>
  z.string().regex(/^\d+$/, `${flag} must be a whole number`).transform(Number).pipe(z.number().int().min(1, `${flag} must be at least 1`));

const FlagsSchema = z.strictObject({
  grid: z.array(z.string()).min(1, '--grid key=v1,v2 is needed at least once'),
  seeds: Count('--seeds').optional(),
  maxParallel: Count('--max-parallel').optional(),
  earlyStop: z
    .string()
    .regex(/^\d+(,\d+)*$/, '--early-stop takes the steps to halve at, e.g. --early-stop 2,4')
    .transform((s) => s.split(',').map(Number))
    .refine((ms) => ms.every((m, i) => m >= 1 && (i === 0 || m > ms[i - 1]!)), '--early-stop steps must be at least 1 and increasing')
    .optional(),
  name: z.string().regex(/^[A-Za-z0-9._-]+$/, '--name may hold letters, digits, ".", "_" and "-"').optional(),
});

export interface SweepFlags {
  grid?: string[];
  seeds?: string;
  maxParallel?: string;
  earlyStop?: string;
  name?: string;
}

const parseValue = (raw: string): GridValue => {
  try {
    const v: unknown = JSON.parse(raw);
    if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) return v as GridValue;
  } catch {
    /* a bare word: a string */
  }
  return raw;
};

/** One `--grid key=v1,v2,...` as a key and its values; a key the run config does not have is named. */
export function parseGrid(word: string): [string, GridValue[]] {
  const eq = word.indexOf('=');
  if (eq <= 0 || eq === word.length - 1) throw new CommandError(`--grid ${JSON.stringify(word)}: expected key=v1,v2,... (e.g. --grid learningRate=1e-4,3e-4)`);
  const key = word.slice(0, eq);
  if (RESERVED.includes(key)) throw new CommandError(`--grid ${key}: the sweep sets ${key} itself`);
  const known = Object.keys(RunConfigSchema.in.shape);
  if (!known.includes(key)) {
    const near = closestName(key, known);
    throw new CommandError(`--grid ${key}: unknown config key ${JSON.stringify(key)} (${near ? `did you mean ${near}?` : 'a top-level field of the run config, e.g. learningRate'})`);
  }
  const values = word.slice(eq + 1).split(',').map(parseValue);
  if (new Set(values.map((v) => JSON.stringify(v))).size !== values.length) throw new CommandError(`--grid ${key}: a value is given twice`);
  return [key, values];
}

/** The sweep's input from the flags and the base config; every child's config is validated as `start` would. */
export function sweepInput(base: RunConfig, flags: SweepFlags, taskQueue: string): SweepInput {
  const parsed = FlagsSchema.safeParse(Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined)), WITH_INPUT);
  if (!parsed.success) throw new CommandError(plainMessage(parsed.error.issues[0]!));
  const f = parsed.data;
  const grid = f.grid.map(parseGrid);
  const dup = grid.map(([k]) => k).find((k, i, all) => all.indexOf(k) !== i);
  if (dup) throw new CommandError(`--grid ${dup} is given twice (list its values once: --grid ${dup}=a,b)`);
  const input: SweepInput = {
    name: f.name ?? `${base.runName ?? 'run'}-sweep`,
    base,
    grid,
    seeds: f.seeds ?? 1,
    maxParallel: 0,
    milestones: f.earlyStop ?? [],
    taskQueue,
  };
  const children = sweepChildren(input);
  input.maxParallel = f.maxParallel ?? children.length;
  for (const child of children) {
    let cfg: RunConfig;
    try {
      cfg = validateRunConfig(child.config, `sweep child ${child.runName} (${JSON.stringify(child.assignment)})`);
    } catch (err) {
      if (err instanceof ConfigError) throw new CommandError(`${err.source}: ${err.problems.join('; ')}`);
      throw err;
    }
    for (const m of input.milestones) {
      if (cfg.evalEvery <= 0 || m % cfg.evalEvery !== 0) {
        throw new CommandError(`--early-stop ${m}: halving reads the eval after step ${m}, but ${child.runName} evaluates ${cfg.evalEvery > 0 ? `every ${cfg.evalEvery} steps` : 'never (evalEvery 0)'}; pick steps that are multiples of evalEvery`);
      }
    }
  }
  return input;
}

/** Starts the sweep; a sweep of that name that is running or finished is not replaced. */
export async function startSweep(client: Client, input: SweepInput): Promise<string> {
  const workflowId = sweepWorkflowId(input.name);
  await client.workflow.start<typeof sweep>('sweep', {
    taskQueue: input.taskQueue,
    workflowId,
    args: [input],
    typedSearchAttributes: [{ key: SWEEP, value: input.name }],
    staticSummary: `sweep ${input.name}: ${input.grid.map(([k, v]) => `${k} in ${v.join(',')}`).join(' x ')}, ${input.seeds} seed(s)`,
    workflowIdConflictPolicy: 'FAIL',
    workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
  });
  return workflowId;
}

/** The sweep's start input, from its history (so a finished sweep's children are found too). */
export async function sweepInputOf(client: Client, name: string): Promise<SweepInput> {
  const workflowId = name.startsWith('agl-sweep-') ? name : sweepWorkflowId(name);
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  if (!payload) throw new CommandError(`sweep ${workflowId}: its history has no start input`);
  return defaultPayloadConverter.fromPayload<SweepInput>(payload);
}

/** Where the sweep is, or its result once finished. */
export async function sweepState(client: Client, name: string): Promise<{ state: string; result: SweepResult }> {
  const handle = client.workflow.getHandle<typeof sweep>(name.startsWith('agl-sweep-') ? name : sweepWorkflowId(name));
  const state = (await handle.describe()).status.name;
  return { state, result: state === 'COMPLETED' ? await handle.result() : await handle.query(sweepProgressQuery) };
}

const num = (v: number | null | undefined) => (typeof v === 'number' ? v.toFixed(3) : '-');

/** One line per child (ranked best first once the sweep is done), and one per milestone decision. */
export function sweepStatusLines(state: string, r: SweepResult): string[] {
  const byName = new Map(r.children.map((c) => [c.runName, c]));
  const order: SweepChild[] = r.ranking.length ? r.ranking.map((n) => byName.get(n)!) : r.children;
  const lines = [`sweep ${r.name}: ${state}, ${r.children.length} runs`];
  order.forEach((c, i) => {
    const scores = Object.entries(c.milestoneScores).map(([step, s]) => `eval@${step} ${num(s)}`);
    const ended = c.stoppedAtMilestone !== undefined ? `stopped at milestone ${c.stoppedAtMilestone}` : c.status;
    lines.push(
      `${r.ranking.length ? `${i + 1}. ` : ''}${c.runName}\t${JSON.stringify(c.assignment)} seed ${c.seed}\t${ended}` +
        `${c.batchesCompleted !== undefined ? `\t${c.batchesCompleted} batches` : ''}${scores.length ? `\t${scores.join(' ')}` : ''}` +
        `${c.lastEvalReward !== undefined ? `\tlast eval ${num(c.lastEvalReward)}` : ''}${c.error ? `\t${c.error.split('\n')[0]}` : ''}`,
    );
  });
  for (const d of r.milestones) lines.push(`milestone ${d.step}: kept ${d.kept.join(', ')}; stopped ${d.stopped.join(', ') || '-'}`);
  return lines;
}
