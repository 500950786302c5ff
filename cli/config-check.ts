// `validate` and `start` check a run config as far as the client can: its fields (config/load.ts), then the
// trainer it names (config/trainer-check.ts: the model served, the credential a hosted service needs). A
// trainer the client cannot reach is a note, not a problem: the worker may reach it (prepareRun checks again).
import { buildDatasets, numBatches } from '../config/dataset';
import { ConfigError } from '../config/errors';
import { loadRunConfigFile } from '../config/load';
import type { RunConfig } from '../config/run-config';
import { checkTrainer } from '../config/trainer-check';
import { modelWarning } from '../config/model-fit';

/**
 * `warnings`: the cookbook's warning when the renderer is not one its registry recommends for the model (the run
 * may still be what the user wants, so it is not a problem).
 */
export async function checkRunConfigFile(file: string, env: NodeJS.ProcessEnv = process.env, opts: { start?: boolean } = {}): Promise<{ cfg: RunConfig; notes: string[]; warnings: string[] }> {
  const cfg = loadRunConfigFile(file);
  // Before a start: what the run's first activity would refuse about its tasks (it would fail at once).
  const dataset = opts.start ? datasetCheck(cfg) : { problems: [] };
  if (dataset.problems.length > 0) throw new ConfigError(file, dataset.problems);
  // The worker's TINKER_BASE_URL wins over the config's baseUrl; in the client's environment it says the same.
  const trainer = await checkTrainer(cfg, { baseUrl: env.TINKER_BASE_URL || cfg.baseUrl, env, timeoutMs: 10_000 });
  if (trainer.problems.length > 0) throw new ConfigError(file, trainer.problems);
  const notes = trainer.unreachable ? [`${trainer.unreachable} (not checked; the run checks again when it starts)`] : [];
  const warning = modelWarning(cfg);
  return { cfg, notes: [...notes, ...(trainer.notes ?? []), ...localTrainerNotes(cfg)], warnings: warning ? [warning] : [] };
}

/**
 * What the run's first activity (prepareRun) would refuse about its tasks, read here as it reads them: a task file
 * that does not parse, or a training set that gives no batch. `batches`: how many the run would train.
 */
export function datasetCheck(cfg: Pick<RunConfig, 'datasetBuilder'>): { problems: string[]; batches?: number } {
  let built;
  try {
    built = buildDatasets(cfg.datasetBuilder);
  } catch (err) {
    return { problems: [`datasetBuilder: ${(err as Error).message.split('\n')[0]}`] };
  }
  const batches = numBatches(built.trainPlan);
  if (batches > 0) return { problems: [], batches };
  const d = cfg.datasetBuilder;
  const why = `${built.train.length} training task${built.train.length === 1 ? '' : 's'}${built.splitNote ? ` (${built.splitNote})` : ''}`;
  return { problems: [`datasetBuilder.batchSize: ${d.batchSize} is more than the ${why}: the run would have no batch to train`], batches };
}

/**
 * What a config means on the bundled trainer that it would not on Tinker: its models are small enough to train
 * whole, so it keeps loraRank in its checkpoints but applies no adapter.
 */
export function localTrainerNotes(cfg: Pick<RunConfig, 'modelName' | 'loraRank'>): string[] {
  if (!cfg.modelName.startsWith('local/')) return [];
  return [`loraRank ${cfg.loraRank}: the local trainer trains all weights of ${cfg.modelName}; loraRank is recorded, not applied`];
}
