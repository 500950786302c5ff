// SkyRL as the project provisions and supervises it: installed once under .data/engines/ (slow only the first time;
// later calls find the marker), the tiny Qwen3 made once, the real server started by the supervisor on a free port
// under a temporary data directory. Its API server is then killed with -9 on its own, as a crash or the OOM killer
// would: the engine it spawned must die with it (two engines on one database would both serve it), and the
// supervisor must bring the service back on the same database, which still knows the model made before the kill.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { freePort } from '../../common/ports';
import { Supervised } from '../../dev/supervisor';
import { ensureTinyQwen3, provisionSkyrl, TINY_QWEN3_SERVED_AS } from '../../engines/skyrl/provision';
import { skyrlService, skyrlStatePaths } from '../../engines/skyrl/service';

const ROOT = path.resolve(__dirname, '..', '..');
const SHARED = path.join(ROOT, '.data');
const say = (line: string) => process.stderr.write(`[skyrl test] ${line}\n`);

/** The processes of a process group, with their command lines (zombies left out). */
function group(pgid: number): { pid: number; cmd: string }[] {
  const out: { pid: number; cmd: string }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z' || Number(fields[2]) !== pgid) continue;
      out.push({ pid: Number(name), cmd: readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ') });
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

async function post<T>(url: string, body: unknown): Promise<T> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  assert.ok(res.ok, `${url} answered ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

test('SkyRL is provisioned, served under the registry name, and comes back from a kill -9 with its database', async () => {
  let t = Date.now();
  const project = await provisionSkyrl({ dataDir: SHARED, log: say });
  say(`provisioned in ${((Date.now() - t) / 1000).toFixed(1)} s: ${project.projectDir}`);
  t = Date.now();
  const model = await ensureTinyQwen3({ python: project.python, dataDir: SHARED, log: say });
  say(`tiny Qwen3 in ${((Date.now() - t) / 1000).toFixed(1)} s: ${model}`);
  assert.ok(existsSync(path.join(model, 'model.safetensors')) && existsSync(path.join(model, 'tokenizer.json')));

  const dataDir = mkdtempSync(path.join(process.env.AGL_TEST_SCRATCH ?? tmpdir(), 'skyrl-'));
  const port = await freePort();
  const spec = skyrlService({ project, model: TINY_QWEN3_SERVED_AS, checkpointPath: model, backend: 'jax', port, dataDir, maxLoraRank: 8, maxLoraAdapters: 4 });
  const api = `${spec.url}/api/v1`;
  const service = new Supervised(spec, say);
  t = Date.now();
  await service.start();
  say(`ready (engine polling) in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  try {
    assert.deepEqual(await (await fetch(`${api}/healthz`)).json(), { status: 'ok' });
    const caps = (await (await fetch(`${api}/get_server_capabilities`)).json()) as { supported_models: { model_name: string }[] };
    assert.deepEqual(caps.supported_models.map((m) => m.model_name), [TINY_QWEN3_SERVED_AS]);

    // A model in its database, made by the engine (its future resolves), to look for after the restart.
    const { session_id } = await post<{ session_id: string }>(`${api}/create_session`, { tags: [], sdk_version: '0.25.0' });
    const made = await post<{ model_id: string; request_id: string }>(`${api}/create_model`, { session_id, base_model: TINY_QWEN3_SERVED_AS, lora_config: { rank: 8 } });
    const result = await post<{ model_id: string }>(`${api}/retrieve_future`, { request_id: made.request_id });
    assert.equal(result.model_id, made.model_id);

    const leader = service.process!.pid;
    const before = group(leader);
    const server = before.find((p) => p.cmd.includes('-m skyrl.tinker.api') && !p.cmd.includes('uv run'));
    assert.ok(server, `no API server in the group: ${JSON.stringify(before)}`);
    assert.ok(before.some((p) => p.cmd.includes('-m skyrl.tinker.engine')), 'the engine runs in the same process group');

    t = Date.now();
    process.kill(server.pid, 'SIGKILL'); // the server alone: its engine is left running unless the supervisor ends it
    while (service.restarts === 0) await new Promise((r) => setTimeout(r, 100));
    await service.whenUp();
    say(`back after the kill in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    const still = new Set(group(leader).map((p) => p.pid));
    const left = before.filter((p) => still.has(p.pid));
    assert.deepEqual(left, [], 'nothing of the killed service is still running');
    assert.notEqual(service.process!.pid, leader);

    assert.deepEqual(await (await fetch(`${api}/healthz`)).json(), { status: 'ok' });
    assert.ok(existsSync(skyrlStatePaths(dataDir).db));
    const runs = (await (await fetch(`${api}/training_runs`)).json()) as { training_runs: { training_run_id: string }[] };
    assert.ok(
      runs.training_runs.some((r) => r.training_run_id === made.model_id),
      `the restarted server's database lists ${made.model_id}: ${JSON.stringify(runs)}`,
    );
  } finally {
    const last = service.process?.pid;
    await service.stop();
    if (last) assert.deepEqual(group(last), [], 'stop() ends the engine too');
  }
});
