// How SkyRL is started (engines/skyrl/service.ts), without starting it: the backend config each backend gets, the
// GPU flags, and AGL_SKYRL_BACKEND_CONFIG merged in or refused in one line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { skyrlService } from '../../engines/skyrl/service';

const project = { projectDir: '/p', uv: '/u/bin/uv', python: '/p/.venv/bin/python' };

function spec(o: { backend?: 'jax' | 'fsdp'; gpu?: boolean; env?: NodeJS.ProcessEnv }) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agl-skyrl-spec-'));
  try {
    return skyrlService({ project, model: 'Qwen/Qwen3-8B', backend: o.backend ?? 'jax', gpu: o.gpu, port: 1234, dataDir, maxLoraRank: 8, maxLoraAdapters: 4, env: o.env ?? {} });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
const backendConfig = (s: ReturnType<typeof spec>) => {
  const i = s.args.indexOf('--backend-config');
  return i < 0 ? null : JSON.parse(s.args[i + 1]!);
};

test('jax on CPU: eager, told CPU; on a GPU: compiled, the gpu extra, no JAX_PLATFORMS', () => {
  const cpu = spec({});
  assert.deepEqual(backendConfig(cpu), { max_lora_adapters: 4, max_lora_rank: 8, enforce_eager: true });
  assert.equal(cpu.env?.JAX_PLATFORMS, 'cpu');
  assert.ok(!cpu.args.includes('gpu'));
  const gpu = spec({ gpu: true });
  assert.deepEqual(backendConfig(gpu), { max_lora_adapters: 4, max_lora_rank: 8, enforce_eager: false });
  assert.equal(gpu.env?.JAX_PLATFORMS, undefined);
  assert.deepEqual(gpu.args.slice(0, 7), ['run', '--extra', 'tinker', '--extra', 'jax', '--extra', 'gpu']);
});

test('AGL_SKYRL_BACKEND_CONFIG adds to the backend config (fsdp: it alone), and a bad one is one line', () => {
  assert.equal(backendConfig(spec({ backend: 'fsdp' })), null, 'fsdp gets no config of ours');
  const placed = '{"trainer.placement.policy_num_nodes": 2, "trainer.placement.policy_num_gpus_per_node": 8}';
  assert.deepEqual(backendConfig(spec({ backend: 'fsdp', env: { AGL_SKYRL_BACKEND_CONFIG: placed } })), JSON.parse(placed));
  assert.deepEqual(backendConfig(spec({ gpu: true, env: { AGL_SKYRL_BACKEND_CONFIG: '{"tensor_parallel_size": 2, "max_lora_adapters": 8}' } })), {
    max_lora_adapters: 8, max_lora_rank: 8, enforce_eager: false, tensor_parallel_size: 2,
  });
  assert.throws(() => spec({ env: { AGL_SKYRL_BACKEND_CONFIG: '{tensor_parallel_size: 2}' } }), /^Error: AGL_SKYRL_BACKEND_CONFIG is not JSON \(.*\): give an object/);
  assert.throws(() => spec({ env: { AGL_SKYRL_BACKEND_CONFIG: '[1]' } }), /AGL_SKYRL_BACKEND_CONFIG must be a JSON object, got \[1\]/);
});
