// A run makes a sampling session on a new sampler checkpoint every step. Those sessions must not outlive
// their checkpoints: once a checkpoint expires (the sweeper) or is deleted (REST), the sessions on it are forgotten in
// memory and in sampling-sessions.jsonl, so neither grows with the run's length; a restarted trainer restores only
// the sessions whose checkpoints remain. Expiry is driven with the sweeper's clock in hand: steps 0 and 1 are saved to
// live an hour, the others two, and the sweep runs as if an hour and a half had passed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ServiceClient } from '../../tinker';
import { parseTinkerPath } from '../../trainer/server/checkpoints';
import { trainerNow } from '../../trainer/server/clock';
import { TEST_MODEL, startTestTrainer, tempDir } from '../tinker/helpers';

const sessionLines = (dataDir: string) => readFileSync(path.join(dataDir, 'sampling-sessions.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { sampling_session_id: string; model_path: string });

async function samplerStatus(url: string, id: string): Promise<number> {
  const res = await fetch(`${url}/api/v1/samplers/${encodeURIComponent(id)}`, { signal: AbortSignal.timeout(5000) });
  await res.arrayBuffer();
  return res.status;
}

test('sampling sessions go with their checkpoints: expired, deleted, and after a restart', async () => {
  const { dir } = tempDir('trainer-sampler-sessions-');
  let trainer = await startTestTrainer({ dataDir: dir });
  const sc = new ServiceClient({ baseUrl: trainer.url, apiKey: 'tml-sessions' });
  try {
    const tc = await sc.createLoraTrainingClient(TEST_MODEL, { rank: 4, seed: 3 });
    const paths: string[] = [];
    const ids: string[] = [];
    for (let step = 0; step < 4; step++) {
      const p = await tc.saveWeightsForSampler(`step-${step}`, { ttlSeconds: step < 2 ? 3600 : 7200 });
      paths.push(p);
      ids.push((await sc.createSamplingClient({ modelPath: p })).samplingSessionId);
    }
    assert.deepEqual(sessionLines(dir).map((r) => r.model_path), paths);

    // Steps 0 and 1 expire: the sweep removes them and the sessions on them.
    await trainer.service.sweepExpired(trainerNow() + 5_400_000);
    assert.deepEqual(await Promise.all(ids.map((id) => samplerStatus(trainer.url, id))), [404, 404, 200, 200]);
    assert.deepEqual(sessionLines(dir).map((r) => r.sampling_session_id), ids.slice(2));

    // Step 2 is deleted by its owner.
    const { modelId, kind, name } = parseTinkerPath(paths[2]!);
    const del = await fetch(`${trainer.url}/api/v1/training_runs/${modelId}/checkpoints/${kind}/${name}`, { method: 'DELETE', signal: AbortSignal.timeout(5000) });
    assert.equal(del.status, 200);
    assert.equal(await samplerStatus(trainer.url, ids[2]!), 404);
    assert.deepEqual(sessionLines(dir).map((r) => r.sampling_session_id), [ids[3]]);

    // A new session after the rewrite is appended, not lost; a restart restores exactly what remains.
    const again = (await sc.createSamplingClient({ modelPath: paths[3]! })).samplingSessionId;
    await trainer.close();
    trainer = await startTestTrainer({ dataDir: dir });
    assert.deepEqual(await Promise.all([...ids, again].map((id) => samplerStatus(trainer.url, id))), [404, 404, 404, 200, 200]);
  } finally {
    await sc.close().catch(() => undefined);
    await trainer.close();
  }
});
