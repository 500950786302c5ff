// How far back a step deletes superseded per-step states and samplers, and how it names them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deletionWindow, stepPath } from '../../activities/checkpoint-lifetimes';

const async = (maxStepsOffPolicy: number, staleRule: 'pace' | 'resample' | 'late') => ({ maxStepsOffPolicy, groupsPerBatch: 4, pipelineDepth: null, staleRule });

test('the window is retainSteps, never within reach of an async group, and none for "all" or the late rule', () => {
  assert.equal(deletionWindow({ retainSteps: 100, async: null }), 100);
  assert.equal(deletionWindow({ retainSteps: 1, async: null }), 2, 'a retried or timed-out call of the last step');
  assert.equal(deletionWindow({ retainSteps: 2, async: async(3, 'pace') }), 5);
  assert.equal(deletionWindow({ retainSteps: 2, async: async(3, 'resample') }), 5);
  assert.equal(deletionWindow({ retainSteps: 1000, async: async(3, 'pace') }), 1000);
  assert.equal(deletionWindow({ retainSteps: 2, async: async(3, 'late') }), null, 'a late straggler has no bound');
  assert.equal(deletionWindow({ retainSteps: 'all', async: null }), null);
  assert.equal(deletionWindow({ retainSteps: undefined as never, async: null }), null, 'runs from before retainSteps keep every state');
});

test("an older step's path is the same run's, renamed; a path not named by its step gives none", () => {
  assert.equal(stepPath('tinker://m:train:0/weights/000120', 120, 20), 'tinker://m:train:0/weights/000020');
  assert.equal(stepPath('tinker://m:train:0/sampler_weights/000120', 120, 0), 'tinker://m:train:0/sampler_weights/000000');
  assert.equal(stepPath('tinker://m:train:0/weights/final', 120, 20), undefined);
  assert.equal(stepPath('tinker://m:train:0/weights/rolling-000120', 120, 20), undefined, 'a rolling save is not a per-step state');
});
