// The id of the resources row a run publishes for one policy step: `<run>-b<batch>-<purpose>`, with anything but
// letters, digits, '.', '_' and '-' made '-' (it goes into URL paths Python clients do not escape). The worker
// writes it (activities/publish-policy.ts); the store's retention reads it back to remove a run's old rows.

const unsafe = /[^A-Za-z0-9._-]/g;

export function policyResourcesId(run: string, batch: number, purpose: 'train' | 'eval'): string {
  return `${run}-b${batch}-${purpose}`.replace(unsafe, '-');
}

/** What every one of the run's ids starts with. */
export const policyResourcesPrefix = (run: string): string => `${run.replace(unsafe, '-')}-b`;

/** The batch a run's resources id names, or null when the id is not one of that run's. */
export function batchOfPolicyResourcesId(run: string, resourcesId: string): number | null {
  const prefix = policyResourcesPrefix(run);
  if (!resourcesId.startsWith(prefix)) return null;
  const m = /^(\d+)-(train|eval)$/.exec(resourcesId.slice(prefix.length));
  return m ? Number(m[1]) : null;
}
