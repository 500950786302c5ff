// Our proxy's OpenAI route against a LiteLLM proxy, both answering without a model: ours on a zero-latency scripted
// sampler (it still renders the messages, tokenizes, samples the script and builds the answer), LiteLLM with
// `mock_response` (no upstream call). The same chat request over keep-alive connections: 1 client making
// 2 x --calls calls, then 64 clients making --calls / 4 each.
// LiteLLM (pinned below; 1.107.0 was a compromised release) is installed into the user's venv cache (test/helpers/python.ts) on first use.
//   npm run bench -- proxy-litellm [--calls 200] [--json FILE]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { waitForHttp } from '../../common/http';
import { freePort } from '../../common/ports';
import { startProcess, stopAllProcesses } from '../../common/processes';
import { ensureVenv } from '../helpers/python';
import { pythonEnv } from '../interop/store-python';
import { closedLoop, flag, loadAverage, startBenchProxy, writeResult, type LoadResult } from './bench-kit';

const LITELLM = 'litellm[proxy]==1.108.7';
const args = process.argv.slice(2);
const CALLS = flag(args, 'calls', 200);
const REPLY = 'Hello! I am a small test policy, and this reply has a few dozen tokens in it, like an agent turn would.';
const BODY = (model: string) => JSON.stringify({
  model,
  max_tokens: 256,
  messages: [
    { role: 'system', content: 'You are a helpful assistant that answers briefly.' },
    { role: 'user', content: 'Hello! Please say hello back, in one short sentence, and mention the weather in Zürich.' },
  ],
});

async function startLiteLlm(): Promise<{ port: number; stop(): Promise<void> }> {
  const venv = await ensureVenv('litellm-1.108.7', [LITELLM]);
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-litellm-'));
  const config = path.join(dir, 'config.yaml');
  writeFileSync(config, [
    'model_list:',
    '  - model_name: bench',
    '    litellm_params:',
    '      model: openai/bench',
    '      api_key: not-used',
    `      mock_response: ${JSON.stringify(REPLY)}`,
    'litellm_settings:',
    '  telemetry: false',
    '',
  ].join('\n'));
  const port = await freePort();
  const proc = await startProcess({
    name: 'litellm', command: path.join(venv.binDir, 'litellm'), args: ['--config', config, '--host', '127.0.0.1', '--port', String(port), '--num_workers', '1'],
    // No key on either proxy's chat route (ours has none): LiteLLM refuses that unless told it is local only.
    env: { ...pythonEnv(), LITELLM_LOG: 'ERROR', DISABLE_SCHEMA_UPDATE: 'true', LITELLM_DANGEROUSLY_PERMIT_WEAK_OR_UNSET_MASTER_KEY: 'true' },
  });
  await waitForHttp(`http://127.0.0.1:${port}/health/liveliness`, 180_000);
  return { port, async stop() { await proc.stop(); rmSync(dir, { recursive: true, force: true }); } };
}

const line = (name: string, c: number, r: LoadResult) =>
  `${name.padEnd(28)} c=${String(c).padEnd(3)} ${r.rps.toFixed(0).padStart(6)} req/s  mean ${r.mean.toFixed(2)} ms  p50 ${r.p50.toFixed(2)}  p99 ${r.p99.toFixed(2)}${r.errors ? `  errors ${r.errors}` : ''}`;

async function main(): Promise<void> {
  const rows: { proxy: string; clients: number; result: LoadResult }[] = [];
  const run = async (name: string, port: number, pathName: string, model: string) => {
    await closedLoop(port, 8, 10, () => ({ path: pathName, body: BODY(model) })); // warm-up
    for (const c of [1, 64]) {
      const result = await closedLoop(port, c, c === 1 ? CALLS * 2 : Math.ceil(CALLS / 4), () => ({ path: pathName, body: BODY(model) }));
      rows.push({ proxy: name, clients: c, result });
      console.log(line(name, c, result));
    }
  };
  const ours = await startBenchProxy('local/tiny-hello', 'role_colon');
  try {
    await run('agl-temporal proxy', ours.port, '/v1/chat/completions', 'local/tiny-hello');
  } finally {
    await ours.proc.stop();
  }
  const lite = await startLiteLlm();
  try {
    await run('LiteLLM proxy (mock_response)', lite.port, '/v1/chat/completions', 'bench');
  } finally {
    await lite.stop();
  }
  const ratio = (c: number) => rows.find((r) => r.proxy !== 'agl-temporal proxy' && r.clients === c)!.result.rps;
  const oursAt = (c: number) => rows.find((r) => r.proxy === 'agl-temporal proxy' && r.clients === c)!.result.rps;
  console.log(`requests/s, ours / LiteLLM: ${(oursAt(1) / ratio(1)).toFixed(1)}x at 1 client, ${(oursAt(64) / ratio(64)).toFixed(1)}x at 64; load average ${loadAverage()}`);
  writeResult(args, { rows, load: loadAverage() });
  await stopAllProcesses();
}

main().catch(async (err) => {
  console.error(err);
  await stopAllProcesses();
  process.exit(1);
});
