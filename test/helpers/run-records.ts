// A run's step records as the store holds them (activities/step-records.ts), read straight from the store's run
// records: the records of the run's one instance (`<runName>@<first run id>`), by step.
import type { StepRecord } from '../../activities/step-records';
import { StoreClient } from '../../store/client';
import type { RunRecord, RunRecordKind } from '../../store/run-records';

/** Every record of one kind of the run named `runName` (its only instance), by seq. */
export async function runRecordsOf(storeUrl: string, runName: string, kind: RunRecordKind, token?: string): Promise<RunRecord[]> {
  const store = new StoreClient(storeUrl, token === undefined ? {} : { token });
  const named = [...new Set((await store.runsWithRecords()).map((r) => r.run).filter((r) => r === runName || r.startsWith(`${runName}@`)))];
  // The run's files (config.json, dataset.json) are kept under its plain name: its records are the instance's.
  const instances = named.filter((r) => r !== runName);
  const runs = instances.length > 0 ? instances : named;
  if (runs.length !== 1) throw new Error(`run ${runName}: ${runs.length} instances with records in the store (${runs.join(', ')})`);
  const out: RunRecord[] = [];
  for (let seq = 0; ; ) {
    const page = await store.runRecords(runs[0]!, { kind, after_seq: seq, limit: 1000 });
    out.push(...page);
    if (page.length < 1000) return out;
    seq = page[page.length - 1]!.seq;
  }
}

/** The step records after the initial one (step 0 is initPolicy's), by step. */
export async function stepRecordsOf(storeUrl: string, runName: string, token?: string): Promise<StepRecord[]> {
  const recs = await runRecordsOf(storeUrl, runName, 'step', token);
  return recs.filter((r) => r.key !== 'initial').sort((a, b) => a.step - b.step || a.seq - b.seq).map((r) => JSON.parse(r.body) as StepRecord);
}
