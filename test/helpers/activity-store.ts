// The store an activity test file runs against: a real one on a free port, started before the file's tests; after
// them the activities' cached store clients are closed, then the store.
import { after, before } from 'node:test';
import { closeServices } from '../../activities/services';
import { startTestStore, type TestStore } from '../store/helpers';

/** The file's store; its fields are there once the file's tests run (filled in by a `before` hook). */
export function activityTestStore(): TestStore {
  const store = {} as TestStore;
  before(async () => {
    Object.assign(store, await startTestStore());
  });
  after(async () => {
    await closeServices();
    await store.close();
  });
  return store;
}
