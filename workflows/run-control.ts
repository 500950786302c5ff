// What both training loops share: the run's visible state, the message handlers that steer it (pause, resume,
// stop, checkpoint, configure, progress), phase and search attributes, the UI's current details, the settings in
// force, one step's bookkeeping and continue-as-new. The loops (sync-loop.ts, async-loop.ts) only decide what
// to run next; the handlers live here, apart from them, as in samples-typescript's safe-message-handlers.
import { allHandlersFinished, condition, continueAsNew, log, makeContinueAsNewFunc, setCurrentDetails, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { TraceEvent, TrainingActivities } from '../activities/types';
import { parseRunChanges, type RunChanges } from '../config/run-changes';
import { checkpointUpdate, configureUpdate, pauseSignal, progressQuery, resumeSignal, stopUpdate } from './messages';
import type { AsyncProgress, CarriedState, CheckpointSaved, ConfigureResult, DiskUse, Metrics, Phase, PolicyState, Progress, RunSettings, TrainingRunInput, TrainingRunWorkflow } from '../shared/run-types';
import { BATCH, PHASE, TRAIN_REWARD } from '../shared/search-attributes';
import { diskText } from '../shared/disk-text';
import { positionText, unitOf } from './batch-numbering';
import { RewardWatch } from './reward-watch';
import { DEFAULT_STOP_GRACE_SECONDS, StopGrace } from './stop-grace';

export const checkpointName = (step: number) => String(step).padStart(6, '0');

const fmt = (m: Metrics, k: string) => (m[k] === undefined ? '-' : Number(m[k]).toFixed(3));

export class RunControl {
  runName = '';
  phase: Phase = 'starting';
  paused: boolean;
  stopRequested = false;
  stopped = false;
  /**
   * The step in progress, counted from 0 as metrics.jsonl's step; steps done = this, between steps. A sync run's
   * step N trains its batch N; an async run's steps take groups from any batch. Progress and results call it
   * `batch` (wire names kept).
   */
  step: number;
  /** Steps in the run: its batches (sync), or its groups over groupsPerBatch (async, an estimate). */
  numSteps = 0;
  lastMetrics: Metrics;
  policy: PolicyState | undefined;
  finalCheckpoint: string | null = null;
  /** Settings changed by `configure`: applied over the config at the start of each step. */
  changes: RunChanges;
  readonly startedAtMs: number;
  stepStartedAtMs = Date.now();
  stepsDone = 0;
  stepSecondsTotal = 0;
  /** Async runs: what the sampler side is doing (shown by progress and the UI). */
  asyncProgress: AsyncProgress | undefined;
  /** Missing rewards and skipped batches: the warning shown, and when to pause for them (reward-watch.ts). */
  readonly rewards: RewardWatch;
  /** Why the run paused itself, until `resume`. */
  pauseReason: string | null;
  /** Disk use behind the run, as read after the last step's metrics. */
  disk: DiskUse | undefined;
  /** What a stop may cut short once its grace is over (stop-grace.ts). */
  readonly grace = new StopGrace();
  /** Set once the config is validated: what the checkpoint update needs to write a row. */
  private recorder: { settings: RunSettings; saveCheckpoint: TrainingActivities['saveCheckpoint'] } | undefined;
  private configured: RunSettings | undefined;

  constructor(carried: CarriedState | undefined) {
    this.paused = carried?.paused ?? false;
    this.step = carried?.nextBatch ?? 0;
    this.lastMetrics = carried?.lastMetrics ?? {};
    this.policy = carried?.policy;
    this.changes = carried?.changes ?? {};
    this.startedAtMs = carried?.startedAtMs ?? Date.now();
    this.rewards = new RewardWatch(carried?.rewardWatch);
    this.pauseReason = carried?.pauseReason ?? null;
    this.disk = carried?.disk;
    this.installHandlers();
  }

  private installHandlers(): void {
    setHandler(pauseSignal, () => {
      this.paused = true;
    });
    setHandler(resumeSignal, () => {
      this.paused = false;
      if (this.pauseReason) this.rewards.resumed();
      this.pauseReason = null;
    });
    setHandler(progressQuery, (): Progress => ({
      runName: this.runName,
      batch: this.step,
      numBatches: this.numSteps,
      phase: this.phase,
      paused: this.paused,
      stopRequested: this.stopRequested,
      lastMetrics: this.lastMetrics,
      policyStep: this.policy?.step ?? 0,
      startedAtMs: this.startedAtMs,
      batchStartedAtMs: this.stepStartedAtMs,
      secondsPerBatch: this.stepsDone > 0 ? this.stepSecondsTotal / this.stepsDone : null,
      changes: this.changes,
      ...(this.asyncProgress ? { async: this.asyncProgress } : {}),
      ...(this.rewards.state.warning ? { warning: this.rewards.state.warning } : {}),
      ...(this.pauseReason ? { pauseReason: this.pauseReason } : {}),
      ...(this.disk ? { disk: this.disk } : {}),
    }));
    setHandler(stopUpdate, async (req) => {
      if (!this.stopRequested) log.info('stop requested', { reason: req?.reason ?? '' });
      this.stopRequested = true;
      this.paused = false; // a paused run stops at once
      // The step in flight gets the grace to finish; then whatever the run still waits on is cancelled.
      void this.grace.stopRequested(req?.graceSeconds ?? DEFAULT_STOP_GRACE_SECONDS, this.phase === 'starting', () => this.stopped);
      await condition(() => this.stopped);
      return { stoppedAfterBatch: this.step, finalCheckpoint: this.finalCheckpoint };
    });
    setHandler(
      checkpointUpdate,
      async (): Promise<CheckpointSaved> => {
        const at = this.policy!;
        const name = checkpointName(at.step);
        log.info('checkpoint requested', { name });
        await this.recorder!.saveCheckpoint(this.recorder!.settings, name, at.step, at, false);
        return { name, batch: at.step, statePath: at.statePath, samplerPath: at.samplerPath };
      },
      {
        // Rejected updates leave no trace in history.
        validator: () => {
          if (!this.policy || !this.recorder) throw new Error('the run has no trained policy yet: try again once its first batch has started');
          if (this.stopRequested || this.stopped) throw new Error('the run is stopping or has ended: its final checkpoint holds the latest policy');
        },
      },
    );
    setHandler(
      configureUpdate,
      (input): ConfigureResult => {
        this.changes = { ...this.changes, ...parseRunChanges(input) };
        // Waiting at the top of the loop (paused, or not yet in it), the step it waits to start gets them.
        const appliesFromBatch = this.phase === 'paused' || this.phase === 'starting' ? this.step : this.step + 1;
        log.info('settings changed', { changes: this.changes, appliesFromBatch });
        return { appliesFromBatch, changes: this.changes };
      },
      {
        validator: (input) => {
          if (!this.recorder) throw new Error('the run is still starting: try again once its config is validated');
          if (this.stopRequested || this.stopped) throw new Error('the run is stopping or has ended');
          parseRunChanges(input);
        },
      },
    );
  }

  /** Once the config is validated: the settings as configured, and how the checkpoint update saves. */
  configure(settings: RunSettings, numSteps: number, saveCheckpoint: TrainingActivities['saveCheckpoint']): void {
    this.configured = settings;
    this.runName = settings.runName;
    this.numSteps = numSteps;
    this.recorder = { settings, saveCheckpoint };
  }

  /** Records a checkpoint row of `policy` (once the config is validated). */
  checkpointSaver(): ((name: string, policy: PolicyState, final: boolean) => Promise<string>) | undefined {
    const r = this.recorder;
    return r && ((name, policy, final) => r.saveCheckpoint(this.settings(), name, policy.step, policy, final));
  }

  /** The config with the `configure` changes over it: read at the start of each step. */
  settings(): RunSettings {
    return { ...this.configured!, ...this.changes };
  }

  setPhase(p: Phase): void {
    this.phase = p;
    upsertSearchAttributes([{ key: PHASE, value: p }]);
    setCurrentDetails(this.currentDetails());
  }

  /** What the UI shows under "Current details" (markdown; not part of history). */
  currentDetails(): string {
    const m = this.lastMetrics;
    const a = this.asyncProgress;
    const unit = unitOf(!!a);
    const position = positionText({ batch: this.step, numBatches: this.numSteps, phase: this.phase, async: !!a });
    return [
      `**${this.runName || 'run'}**: ${position} (counted from 0, as metrics.jsonl's step), ${this.paused ? 'paused' : this.phase}${this.stopRequested ? ' (stopping)' : ''}`,
      `last ${unit}: train reward ${fmt(m, 'env/all/reward/total')}, eval reward ${fmt(m, 'test/env/all/reward/total')}, ${fmt(m, 'time/total')} s`,
      ...(a
        ? [
            `async: ${a.inFlight} groups sampling, ${a.finished} finished waiting, ${a.requeued} to sample again; ` +
              `staleness of the last step mean ${fmt(m, 'async/staleness_mean')}, max ${fmt(m, 'async/staleness_max')} (bound ${a.maxStepsOffPolicy}); ` +
              `trainer idle ${fmt(m, 'async/trainer_idle_frac')}; groups sent back as stale ${a.resampled}, dropped ${a.droppedStale}, failed ${a.failed}`,
          ]
        : []),
      `policy step ${this.policy?.step ?? 0}${this.policy ? `: \`${this.policy.samplerPath}\`` : ''}`,
      ...(Object.keys(this.changes).length ? [`configured: ${Object.entries(this.changes).map(([k, v]) => `${k}=${v}`).join(', ')}`] : []),
      ...(this.pauseReason ? [`**paused by the run itself**: ${this.pauseReason}`] : []),
      ...(this.rewards.state.warning ? [`**warning**: ${this.rewards.state.warning}`] : []),
      ...[diskText(this.disk, unit)].filter((line): line is string => line !== null),
    ].join('\n\n');
  }

  /** Times `fn` into metrics[`time/<name>`] (and a trace event when tracing). */
  async timed<T>(name: string, fn: () => Promise<T>, metrics: Metrics, trace: TraceEvent[] | null): Promise<T> {
    const t0 = Date.now();
    try {
      return await fn();
    } finally {
      const seconds = (Date.now() - t0) / 1000;
      metrics[`time/${name}`] = seconds;
      trace?.push({ name, ph: 'X', ts: t0 * 1000, dur: seconds * 1e6, pid: 1, tid: 1, args: { batch: this.step } });
    }
  }

  /** After a step's metrics row is written: progress, search attributes, a log line. */
  stepDone(metrics: Metrics, skipReason?: string, disk?: DiskUse): void {
    this.lastMetrics = metrics;
    // A read that got nothing (services slow or hosted) keeps the last one that did.
    if (disk && (disk.store || disk.trainer)) this.disk = disk;
    const pauseAfter = this.settings().pauseAfterBatchesWithoutReward ?? 0;
    const pause = this.rewards.observe(this.step, unitOf(!!this.asyncProgress), metrics, skipReason, pauseAfter);
    if (this.rewards.state.warning) log.warn(this.rewards.state.warning);
    if (pause && !this.stopRequested) {
      log.warn(pause);
      this.paused = true;
      this.pauseReason = pause;
    }
    this.stepsDone++;
    this.stepSecondsTotal += metrics['time/total'] ?? 0;
    const trainReward = metrics['env/all/reward/total'];
    upsertSearchAttributes([
      { key: BATCH, value: this.step + 1 },
      ...(trainReward !== undefined && Number.isFinite(trainReward) ? [{ key: TRAIN_REWARD, value: trainReward }] : []),
    ]);
    log.info(this.asyncProgress ? 'step done' : 'batch done', { batch: this.step, reward: trainReward ?? null, seconds: metrics['time/total'] });
  }

  /**
   * Continues as new when Temporal suggests it, or when a new worker build became current (the run is pinned to
   * the build that started it: it moves to the new one here, between steps); never with a stop pending (its caller
   * waits on this run). Unversioned workers never see a new build, so their runs are unchanged.
   */
  async maybeContinueAsNew(config: TrainingRunInput['config'], more: boolean, extra: () => Partial<CarriedState> = () => ({})): Promise<void> {
    const info = workflowInfo();
    const upgrade = info.targetWorkerDeploymentVersionChanged;
    if (!(info.continueAsNewSuggested || upgrade) || this.stopRequested || !more) return;
    await condition(allHandlersFinished);
    const next: CarriedState = {
      nextBatch: this.step + 1,
      policy: this.policy!,
      paused: this.paused,
      lastMetrics: this.lastMetrics,
      startedAtMs: this.startedAtMs,
      ...(Object.keys(this.changes).length ? { changes: this.changes } : {}),
      ...(this.rewards.state.batchesWithoutReward || this.rewards.state.warning ? { rewardWatch: this.rewards.state } : {}),
      ...(this.pauseReason ? { pauseReason: this.pauseReason } : {}),
      ...(this.disk ? { disk: this.disk } : {}),
      ...extra(),
    };
    if (upgrade) {
      log.info('a new worker build is current: continuing as new on it', { batch: this.step });
      // The next run's first task goes to the current build; from then on it is pinned there.
      await makeContinueAsNewFunc<TrainingRunWorkflow>({ initialVersioningBehavior: 'AUTO_UPGRADE' })({ config, carried: next });
    }
    await continueAsNew<TrainingRunWorkflow>({ config, carried: next });
  }
}
