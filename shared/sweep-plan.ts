// A sweep's plan and its rules as pure data and functions, shared by the sweep workflow, its activities and the
// client: which children a sweep has (names derived from the sweep's name, the config's index in the grid and
// the seed's index, so a replay, a report or `client sweep-status` finds the same ones), which half of a
// milestone's children stop (successive halving), and how the children rank at the end.
import type { RunConfig } from '../config/run-config';

/** One grid value: what a `--grid key=v1,v2` gives after JSON parsing (strings that are not JSON stay strings). */
export type GridValue = string | number | boolean | null;

export interface SweepInput {
  /** The sweep's name: workflow id `agl-sweep-<name>`, children `<name>-c<config>-s<seed>`. */
  name: string;
  /** The run config every child starts from (validated by the client, defaults applied). */
  base: RunConfig;
  /** Top-level config keys and their values, in the order given; children are their cartesian product. */
  grid: [string, GridValue[]][];
  /** Seeds per config: the base config's datasetBuilder.seed (data order, sampling, initial weights), seed+1, ... */
  seeds: number;
  /** At most this many children training at once (a child held at a milestone does not count). */
  maxParallel: number;
  /** Successive halving after the eval of the policy after each of these steps (ascending); empty = none. */
  milestones: number[];
  /** The task queue children run on (the sweep's own). */
  taskQueue: string;
}

export interface ChildPlan {
  index: number;
  configIndex: number;
  seedIndex: number;
  runName: string;
  workflowId: string;
  /** The grid values this child has, and its seed. */
  assignment: Record<string, GridValue>;
  seed: number;
  config: RunConfig;
}

export const sweepWorkflowId = (name: string) => `agl-sweep-${name}`;
export const childRunName = (sweep: string, configIndex: number, seedIndex: number) => `${sweep}-c${configIndex}-s${seedIndex}`;

/** Every assignment of the grid, the first key varying slowest. */
export function gridAssignments(grid: [string, GridValue[]][]): Record<string, GridValue>[] {
  let out: Record<string, GridValue>[] = [{}];
  for (const [key, values] of grid) out = out.flatMap((a) => values.map((v) => ({ ...a, [key]: v })));
  return out;
}

/** The children of a sweep, in start order: config 0 seed 0, config 0 seed 1, ... Files beside the base logPath. */
export function sweepChildren(input: SweepInput): ChildPlan[] {
  const dir = input.base.logPath.replace(/\/+$/, '').replace(/\/[^/]*$/, '');
  return gridAssignments(input.grid).flatMap((assignment, configIndex) =>
    Array.from({ length: input.seeds }, (_, seedIndex): ChildPlan => {
      const runName = childRunName(input.name, configIndex, seedIndex);
      const seed = input.base.datasetBuilder.seed + seedIndex;
      return {
        index: configIndex * input.seeds + seedIndex,
        configIndex,
        seedIndex,
        runName,
        workflowId: `agl-run-${runName}`,
        assignment,
        seed,
        // Held after the row of each milestone (the eval after m steps, logged in batch m) until the sweep decides.
        config: {
          ...input.base,
          ...assignment,
          datasetBuilder: { ...input.base.datasetBuilder, seed },
          runName,
          logPath: `${dir}/${runName}`,
          ...(input.milestones.length ? { pauseBeforeBatches: input.milestones.map((m) => m + 1) } : {}),
        } as RunConfig,
      };
    }),
  );
}

/** A child's eval reward at a milestone: null when it logged none there (ranked below every number). */
export interface MilestoneScore {
  index: number;
  score: number | null;
}

const byScore = (a: MilestoneScore, b: MilestoneScore) => (b.score ?? -Infinity) - (a.score ?? -Infinity) || a.index - b.index;

/**
 * Successive halving at one milestone: the better half (rounded up) goes on, the worse half stops. Ties go to the
 * child started first, so the decision depends on the scores alone.
 */
export function halve(scores: MilestoneScore[]): { keep: number[]; stop: number[] } {
  const sorted = [...scores].sort(byScore);
  const k = Math.ceil(sorted.length / 2);
  return { keep: sorted.slice(0, k).map((s) => s.index), stop: sorted.slice(k).map((s) => s.index) };
}

/** The children best first by their last eval reward (as the comparing report ranks runs); none logged: last. */
export function rankByEval(scores: MilestoneScore[]): number[] {
  return [...scores].sort(byScore).map((s) => s.index);
}

/** What became of one child, in the sweep's result and progress. */
export interface SweepChild {
  runName: string;
  workflowId: string;
  assignment: Record<string, GridValue>;
  seed: number;
  status: 'waiting' | 'running' | 'held' | 'queued' | 'stopping' | 'completed' | 'stopped' | 'failed';
  /** Eval reward at each milestone it reached, by step. */
  milestoneScores: Record<string, number | null>;
  /** The milestone step at which successive halving stopped it. */
  stoppedAtMilestone?: number;
  batchesCompleted?: number;
  lastEvalReward?: number | null;
  lastEvalStep?: number | null;
  error?: string;
}

export interface MilestoneDecision {
  step: number;
  kept: string[];
  stopped: string[];
}

export interface SweepResult {
  name: string;
  children: SweepChild[];
  milestones: MilestoneDecision[];
  /** Run names, best first by last eval reward. */
  ranking: string[];
}
