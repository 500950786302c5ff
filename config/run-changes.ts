// The settings a running run may change (the workflow's `configure` update), with the same checks as the run
// config. Imported by the workflow, so nothing here touches Node APIs.
import { z } from 'zod';
import { describeIssues, WITH_INPUT } from './errors';

export const LearningRate = z.number().positive();
/** evalEvery / saveEvery: every N batches, 0 = never. */
export const EveryBatches = z.number().int().min(0);
export const Temperature = z.number().min(0).max(2);

export const RunChangesSchema = z.strictObject({
  learningRate: LearningRate.optional(),
  evalEvery: EveryBatches.optional(),
  saveEvery: EveryBatches.optional(),
  trainTemperature: Temperature.optional(),
  evalTemperature: Temperature.optional(),
});
export type RunChanges = z.infer<typeof RunChangesSchema>;

/** The changes, or an Error naming every bad field (also unknown ones: only the fields above may change). */
export function parseRunChanges(input: unknown): RunChanges {
  const r = RunChangesSchema.safeParse(input ?? {}, WITH_INPUT);
  if (!r.success) throw new Error(`configure: ${describeIssues(r.error.issues).join('; ')}`);
  if (Object.keys(r.data).length === 0) throw new Error(`configure: nothing to change; give any of ${Object.keys(RunChangesSchema.shape).join(', ')}`);
  return r.data;
}
