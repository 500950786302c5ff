// Writes docs/agents-on-temporal.png: the Temporal UI's list of one training run's agent workflows (its rollouts),
// after a short real run of the AI SDK example agent. Not a test: `node --import tsx test/agents/screenshot-rollouts.ts`.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startOrAttach } from '../../cli/run-commands';
import { startProcess } from '../../common/processes';
import { ensureChromium } from '../helpers/chromium';
import { ROOT } from '../helpers/commands';
import { localRunConfig, startTestStack } from '../helpers/local-run';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

async function main(): Promise<void> {
  process.env.AGL_TRAINER_ENGINE = 'bigram';
  const { stack, dataDir, taskQueue } = await startTestStack('shot', { runners: 0, initialModel: 'local/bigram' });
  const queue = 'ai-sdk-agent';
  const worker = await startProcess({
    name: 'agent-worker', command: process.execPath, cwd: ROOT, readyLine: /agent worker polling/, readyTimeoutMs: 180_000,
    args: ['--import', 'tsx', 'agents/examples/ai-sdk/worker.ts', '--address', stack.temporal.address, '--task-queue', queue],
  });
  try {
    const temporal = new Client({ connection: await Connection.connect({ address: stack.temporal.address }) });
    const cfg = localRunConfig(stack, dataDir, 'hello-agent-workflow', {
      modelName: 'local/bigram', maxTokens: 16, evalEvery: 0, saveEvery: 0, agentWorkflow: { type: 'helloAgentWorkflow', taskQueue: queue },
      datasetBuilder: { batchSize: 2, groupSize: 2, shuffle: false, trainDataset: ['Alice', 'Bob'], valDataset: ['Alice'] },
    });
    const run = await startOrAttach(temporal, taskQueue, cfg);
    await run.handle.result();
    await new Promise((r) => setTimeout(r, 2000)); // visibility catches up
    const query = encodeURIComponent(`AglRunName="${cfg.runName}"`);
    const url = `${stack.temporal.uiUrl}/namespaces/default/workflows?query=${query}`;
    const png = path.join(ROOT, 'docs/agents-on-temporal.png');
    mkdirSync(path.dirname(png), { recursive: true });
    const chromium = await ensureChromium();
    await promisify(execFile)(chromium, ['--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars', '--window-size=1500,700', '--virtual-time-budget=15000', `--screenshot=${png}`, url], { timeout: 120_000 });
    console.log(`wrote ${png} (${url})`);
  } finally {
    await worker.stop(2000);
    await stack.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
