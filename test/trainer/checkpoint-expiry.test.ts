// The trainer's sweeper deletes a checkpoint once its expiry passes, and only then. It keeps the expiries in
// memory so a sweep reads only what is due; these cases check that every way an expiry is given or taken back reaches
// the sweep: saved with one, set later (the REST ttl route), cleared, deleted, and saved by an earlier life of the
// trainer. The clock is in hand: each sweep is told what time it is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CheckpointStore, type TinkerPath } from '../../trainer/server/checkpoints';
import { expiry } from '../../trainer/server/checkpoint-rest';
import { trainerNow } from '../../trainer/server/clock';
import { tempDir } from '../tinker/helpers';

const HOUR = 3600_000;
const at = (name: string): TinkerPath => ({ modelId: 's-1:train:0', kind: 'sampler_weights', name });
const save = (store: CheckpointStore, name: string, ttlSeconds: number | null) =>
  store.save(at(name), true, (dir) => writeFile(path.join(dir, 'weights.bin'), 'w'), expiry(ttlSeconds));
const onDisk = (store: CheckpointStore, name: string) => existsSync(store.dir(at(name)));

test('a checkpoint goes at its expiry, however the expiry was given, and not before', async (t) => {
  const { dir, remove } = tempDir('trainer-expiry-');
  t.after(remove);
  const store = new CheckpointStore(dir);
  const t0 = trainerNow();
  assert.deepEqual(await store.sweepExpired(t0), []); // as a trainer's first sweep at start: from here on, memory is used
  await save(store, 'saved-with-ttl', 3600);
  await save(store, 'kept', null);
  await save(store, 'ttl-set-later', null);
  await store.setTtl(at('ttl-set-later'), 3600);
  await save(store, 'ttl-cleared', 3600);
  await store.setTtl(at('ttl-cleared'), null);
  await save(store, 'ttl-extended', 3600);
  await store.setTtl(at('ttl-extended'), 3 * 3600);
  await save(store, 'deleted', 3600);
  await store.remove(at('deleted'));

  assert.deepEqual(await store.sweepExpired(t0 + HOUR / 2), [], 'nothing is due after half an hour');
  const gone = await store.sweepExpired(t0 + 2 * HOUR);
  assert.deepEqual(gone.sort(), ['tinker://s-1:train:0/sampler_weights/saved-with-ttl', 'tinker://s-1:train:0/sampler_weights/ttl-set-later']);
  for (const name of ['saved-with-ttl', 'ttl-set-later']) assert.equal(onDisk(store, name), false, name);
  for (const name of ['kept', 'ttl-cleared', 'ttl-extended']) assert.equal(onDisk(store, name), true, name);

  assert.deepEqual(await store.sweepExpired(t0 + 4 * HOUR), ['tinker://s-1:train:0/sampler_weights/ttl-extended']);
  assert.equal(onDisk(store, 'kept'), true);
  assert.equal(onDisk(store, 'ttl-cleared'), true);
});

test("a restarted trainer's sweep finds the expiries an earlier life saved", async (t) => {
  const { dir, remove } = tempDir('trainer-expiry-restart-');
  t.after(remove);
  const t0 = trainerNow();
  const before = new CheckpointStore(dir);
  await save(before, 'old', 3600);
  await save(before, 'kept', null);
  const after = new CheckpointStore(dir); // a new life: nothing in memory
  assert.deepEqual(await after.sweepExpired(t0 + 2 * HOUR), ['tinker://s-1:train:0/sampler_weights/old']);
  assert.equal(onDisk(after, 'old'), false);
  assert.equal(onDisk(after, 'kept'), true);
  // A checkpoint saved after the first sweep is swept too.
  await save(after, 'new', 3600);
  assert.deepEqual(await after.sweepExpired(t0 + 2 * HOUR), ['tinker://s-1:train:0/sampler_weights/new']);
});
