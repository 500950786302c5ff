// Splitting a batch into optimizer substeps (cookbook train_step + utils/misc_utils.split_list).

/**
 * Contiguous chunks whose sizes differ by at most one, longer and shorter ones spread evenly:
 * edges are floor(i * n / k), as numpy.linspace(0, n, k + 1).astype(int).
 */
export function splitList<T>(items: readonly T[], numSplits: number): T[][] {
  if (!Number.isInteger(numSplits) || numSplits <= 0) throw new Error(`numSplits must be a positive integer, got ${numSplits}`);
  if (numSplits > items.length) throw new Error(`cannot split a list of length ${items.length} into ${numSplits} parts`);
  const step = items.length / numSplits;
  const edge = (i: number) => (i === numSplits ? items.length : Math.floor(i * step));
  const out: T[][] = [];
  for (let i = 0; i < numSplits; i++) out.push(items.slice(edge(i), edge(i + 1)));
  return out;
}

/**
 * The minibatches of one training step: min(numSubsteps, len(data)) chunks, each followed by its
 * own optim_step. Empty data gives no chunk (the cookbook raises; the caller skips the step).
 */
export function splitIntoSubsteps<T>(data: readonly T[], numSubsteps: number): T[][] {
  if (!Number.isInteger(numSubsteps) || numSubsteps <= 0) throw new Error(`numSubsteps must be a positive integer, got ${numSubsteps}`);
  if (data.length === 0) return [];
  return splitList(data, Math.min(numSubsteps, data.length));
}
