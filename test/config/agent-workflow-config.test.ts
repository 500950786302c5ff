// The run config's rollout sources: `agent` and `agentWorkflow`, each mistake a clear line with its path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateRunConfig } from '../../config/load';

const base = { learningRate: 1e-4, modelName: 'local/tiny-test', rendererName: 'role_colon', logPath: '/tmp/agl-x', datasetBuilder: { batchSize: 1, trainDataset: ['a'] } };
const problems = (extra: Record<string, unknown>): string => {
  try {
    validateRunConfig({ ...base, ...extra });
    return '';
  } catch (err) {
    return (err as Error).message;
  }
};

test('agentWorkflow and agent: defaults, and each mistake said with its path', () => {
  const ok = validateRunConfig({ ...base, agentWorkflow: { type: 'helloAgentWorkflow', taskQueue: 'q' } });
  assert.deepEqual(ok.agentWorkflow, { type: 'helloAgentWorkflow', taskQueue: 'q', namespace: null, grader: null });
  assert.equal(ok.agent, null);
  assert.equal(validateRunConfig({ ...base, agent: 'hello-v2' }).agent, 'hello-v2');

  assert.match(problems({ agentWorkflow: { type: 'x', taskQueue: 'q' }, agent: 'a' }), /agentWorkflow: an agent workflow serves the rollouts: give agentWorkflow, agent or aglController, not several/);
  assert.match(problems({ agentWorkflow: { type: 'x', taskQueue: 'q' }, rolloutTimeoutSeconds: null }), /rolloutTimeoutSeconds: agent workflows need a rollout timeout/);
  assert.match(problems({ agentWorkflow: { type: 'has space', taskQueue: 'q' } }), /agentWorkflow\.type: must be a workflow or activity type name/);
  assert.match(problems({ agentWorkflow: { type: 'x' } }), /agentWorkflow\.taskQueue/);
  assert.match(problems({ agentWorkflow: { type: 'x', taskQueue: 'q', taskqueue: 'q' } }), /taskqueue/);
  assert.match(problems({ agent: 'two words' }), /agent: must be letters, digits/);
});
