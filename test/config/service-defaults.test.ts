// Run configs that leave their services out find them in the environment (config/service-defaults.ts), and the
// example configs carry no port a user may have changed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { withServiceDefaults } from '../../config/service-defaults';
import { loadRunConfigFile, validateRunConfig } from '../../config/load';

const EXAMPLES = path.resolve(__dirname, '../../agents/examples');
const base = { runName: 'x', learningRate: 1e-3, modelName: 'local/tiny-hello', rendererName: 'role_colon', logPath: '/tmp/x', datasetBuilder: { batchSize: 1, trainDataset: ['1'] } };
const resolved = (raw: object, env: NodeJS.ProcessEnv) => validateRunConfig(withServiceDefaults(raw, env));

test('absent service URLs come from AGL_STORE_URL / AGL_PROXY_URL / TINKER_BASE_URL, else the *_PORT variables, else the default ports', () => {
  const none = resolved(base, {});
  assert.equal(none.storeAddress, 'http://127.0.0.1:4747');
  assert.equal(none.proxyUrl, 'http://127.0.0.1:12306');
  assert.equal(none.baseUrl, 'http://127.0.0.1:8110');
  const ports = resolved(base, { STORE_PORT: '5000', PROXY_PORT: '5001', TRAINER_PORT: '5002' });
  assert.deepEqual([ports.storeAddress, ports.proxyUrl, ports.baseUrl], ['http://127.0.0.1:5000', 'http://127.0.0.1:5001', 'http://127.0.0.1:5002']);
  const urls = resolved(base, { AGL_STORE_URL: 'http://hub:4747', AGL_PROXY_URL: 'http://proxy-a:12306', TINKER_BASE_URL: 'http://hub:8110', STORE_PORT: '5000' });
  assert.deepEqual([urls.storeAddress, urls.proxyUrl, urls.baseUrl], ['http://hub:4747', 'http://proxy-a:12306', 'http://hub:8110']);
});

test('what the config gives is kept; a hosted model without baseUrl stays on the hosted service', () => {
  const given = resolved({ ...base, storeAddress: 'http://s:1', llmProxyPort: 7000, baseUrl: 'http://t:2' }, { AGL_STORE_URL: 'http://other:9', AGL_PROXY_URL: 'http://other:8' });
  assert.deepEqual([given.storeAddress, given.proxyUrl, given.llmProxyPort, given.baseUrl], ['http://s:1', null, 7000, 'http://t:2']);
  const hosted = resolved({ ...base, modelName: 'Qwen/Qwen3-8B', rendererName: 'qwen3' }, { TRAINER_PORT: '5002' });
  assert.equal(hosted.baseUrl, null);
});

test('the example configs name no service and no port; read with STORE_PORT set, they use it', () => {
  const files = readdirSync(EXAMPLES).filter((f) => f.endsWith('.run.json'));
  assert.ok(files.length >= 3);
  for (const f of files) {
    const text = readFileSync(path.join(EXAMPLES, f), 'utf8');
    assert.doesNotMatch(text, /"(storeAddress|baseUrl|proxyUrl|llmProxyPort)"/, f);
    assert.doesNotMatch(text, /127\.0\.0\.1|localhost|:\d{4,5}\b/, f);
  }
  const saved = process.env.STORE_PORT;
  process.env.STORE_PORT = '5555';
  try {
    assert.equal(loadRunConfigFile(path.join(EXAMPLES, 'hello.run.json')).storeAddress, 'http://127.0.0.1:5555');
  } finally {
    if (saved === undefined) delete process.env.STORE_PORT;
    else process.env.STORE_PORT = saved;
  }
});
