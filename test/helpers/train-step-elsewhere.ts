// A second worker host, as far as one activity goes: a process of its own that runs trainStep once as a fresh
// attempt (MockActivityEnvironment) with the arguments in argv[2] (JSON) and prints its result as JSON. The test
// gives it a run directory of its own, so nothing on the first host's disk can reach it.
import { MockActivityEnvironment } from '@temporalio/testing';
import { closeServices } from '../../activities/services';
import { trainStep } from '../../activities/train-step';

async function main(): Promise<void> {
  const [settings, batch, collected, policy] = JSON.parse(process.argv[2]!) as Parameters<typeof trainStep>;
  const result = await new MockActivityEnvironment().run(trainStep, settings, batch, collected, policy);
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
  await closeServices();
}

main().then(() => process.exit(0), (err) => {
  console.error(err);
  process.exit(1);
});
