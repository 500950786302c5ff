// Run config `aglController` (a run served by Agent-lightning 1.0 agents): its mistakes are named by field, and
// what it puts on a run's rollouts is the 1.0 launch config the controller reads.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../config/errors';
import { validateRunConfig } from '../../config/load';
import { launchMetadata } from '../../gateway/launch';

const minimal = {
  learningRate: 1e-5,
  datasetBuilder: { batchSize: 2, trainDataset: ['1', '2'] },
  modelName: 'local/tiny-hello',
  rendererName: 'role_colon',
  logPath: 'logs/agl1',
};

const problems = (aglController: unknown): string => {
  try {
    validateRunConfig({ ...minimal, aglController });
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.message;
  }
  assert.fail('accepted');
};

test('mistakes in aglController name the field', () => {
  assert.match(problems({ agentClass: 'not a class' }), /aglController\.agentClass.*module:Class/);
  assert.match(problems({ envMap: { AGL_TASK: 'input' } }), /aglController.*give agentClass \(local controller\) or jobTemplate \(k8s controller\)/);
  assert.match(problems({ agentClass: 'a:B', envMap: { 'BAD-NAME': 'input' } }), /aglController\.envMap\.BAD-NAME: not an environment variable name/);
  assert.match(problems({ agentClass: 'a:B', agent_class: 'a:B' }), /aglController/);
});

test('defaults to none; set, it becomes the 1.0 launch config of every rollout the run enqueues', () => {
  assert.equal(validateRunConfig(minimal).aglController, null);
  assert.deepEqual(launchMetadata(null), {});
  const cfg = validateRunConfig({ ...minimal, aglController: { agentClass: 'agl1_hello:HelloAgent', envMap: { AGL_TASK: 'input' } } });
  assert.deepEqual(launchMetadata(cfg.aglController), {
    agl1: { config: { local: { agent_class: 'agl1_hello:HelloAgent', env_map: { AGL_TASK: 'input' } }, k8s: null } },
  });
  const k8s = validateRunConfig({ ...minimal, aglController: { jobTemplate: 'apiVersion: batch/v1' } });
  assert.deepEqual(launchMetadata(k8s.aglController), { agl1: { config: { local: null, k8s: { job_template: 'apiVersion: batch/v1' } } } });
});
