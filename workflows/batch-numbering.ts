// One batch numbering for every view of a run (progress line, UI current details, summary, list, configure):
// batch N is metrics.jsonl's step N, counted from 0, so "batch 4/20" is the fifth of 20 and 4 are done. A finished
// or stopped run shows how many were done. Async runs count optimizer steps the same way ("step 4/~20": their
// number is known only once every group is in). Pure: the workflow's current details use it too.

export interface Position {
  batch: number;
  numBatches: number;
  phase: string;
  async: boolean;
}

export const unitOf = (async: boolean) => (async ? 'step' : 'batch');
const plural = (async: boolean) => (async ? 'steps' : 'batches');

/**
 * "batch 4/20" while batch 4 runs; once the run has ended (or its last batch is done), how many were done:
 * "20/20 batches done", "12 steps done".
 */
export function positionText(p: Position): string {
  const ended = p.phase === 'done' || p.phase === 'stopped' || (!p.async && p.batch >= p.numBatches);
  if (ended) return p.async ? `${p.batch} ${plural(true)} done` : `${p.batch}/${p.numBatches} ${plural(false)} done`;
  return `${unitOf(p.async)} ${p.batch}/${p.async ? '~' : ''}${p.numBatches}`;
}
