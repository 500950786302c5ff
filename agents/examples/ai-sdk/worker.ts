// The agent's Temporal worker, as its team runs it, plus the one change that trains it: the AI SDK plugin gets the
// training provider instead of the production one. Everything else (workflows, activities, task queue) is the
// agent's own.
//   node --import tsx agents/examples/ai-sdk/worker.ts --address 127.0.0.1:7233 --task-queue my-agent
import { NativeConnection, Worker } from '@temporalio/worker';
import { AiSdkPlugin } from '@temporalio/ai-sdk';
import { trainingProvider } from '../../temporal/training-provider';
import * as activities from './activities';

function flag(name: string, fallback?: string): string {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? process.argv[i + 1] : fallback;
  if (v === undefined) throw new Error(`--${name} is required`);
  return v;
}

async function main(): Promise<void> {
  const connection = await NativeConnection.connect({ address: flag('address', process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233') });
  const worker = await Worker.create({
    connection,
    namespace: flag('namespace', 'default'),
    taskQueue: flag('task-queue', 'ai-sdk-agent'),
    workflowsPath: require.resolve('./workflows'),
    activities,
    // In production: new AiSdkPlugin({ modelProvider: openai }). Training: the proxy, scoped to each rollout.
    plugins: [new AiSdkPlugin({ modelProvider: trainingProvider() })],
  });
  console.log(`agent worker polling task queue ${worker.options.taskQueue}`);
  await worker.run();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
