// README's "Bring your own agent", run as written with ports changed: `npm start -- --runners 0` starts everything
// but the runners and says the run waits for them; Agent-lightning 0.3 runners (agents/python/hello_runner.py, in
// a virtual environment of agents/python/constraints-agl-0.3.txt) against the store it printed train the run;
// `npm run client -- stop` ends it, and a second `npm start` reports the run as finished instead of resuming it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startProcess, type ManagedProcess } from '../../common/processes';
import { client, ROOT } from '../helpers/commands';
import { npmStart, npmStartEnv } from '../helpers/npm-start';
import { aglVenv, pythonEnv } from '../interop/store-python';

const RUN = 'hello-local-tiny-test';

test('npm start --runners 0 trains with Python Agent-lightning 0.3 runners; started again, the run is reported finished', { timeout: 900_000 }, async () => {
  const venv = await aglVenv();
  const data = mkdtempSync(path.join(tmpdir(), 'agl-byo-'));
  // local/tiny-test instead of the example's model: it builds in a second (this is about the plumbing).
  const args = ['--runners', '0', '--model', 'local/tiny-test', '--data', data];
  const env = await npmStartEnv();
  const start = await npmStart(args, env);
  const runners: ManagedProcess[] = [];
  try {
    const [, temporal, store] = await start.waitFor(/Temporal (127\.0\.0\.1:\d+), store (http:\/\/\S+),/);
    await start.waitFor(/no runners started \(--runners 0\): start your own against the store/);
    await start.waitFor(new RegExp(`\\| waiting for runners: none started here \\(--runners 0\\); start yours against the store ${store}`));
    for (const id of ['0', '1']) {
      runners.push(
        await startProcess({
          name: `python-runner-${id}`, command: venv.python, args: ['agents/python/hello_runner.py', '--store', store!, '--worker-id', id],
          cwd: ROOT, env: pythonEnv(), readyLine: /python runner \d+ polling/, readyTimeoutMs: 180_000,
        }),
      );
    }
    await start.waitFor(/\| batch 1\/20 \|/); // batch 0 is trained
    // Read now: once the run stops, npm start takes its store down and Agent-lightning's runners log a
    // traceback for every heartbeat that cannot reach it, which is theirs to report, not a fault here.
    const whileServed = runners.map((r) => r.output()).join('\n');
    const stopped = await client(['stop', RUN, '--address', temporal!]);
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.equal(await start.proc.exited, 0, start.proc.output().slice(-3000));
    assert.match(start.proc.output(), new RegExp(`${RUN}: stopped after \\d+/20 batches`));

    const first = JSON.parse(readFileSync(path.join(data, 'runs', RUN, 'metrics.jsonl'), 'utf8').split('\n')[0]!);
    assert.equal(first['env/all/by_group/frac_status_succeeded'], 1, 'the Python runners finished every rollout of batch 0');
    assert.ok(first['env/all/total_ac_tokens'] > 0, 'their calls through the proxy were trained on');
    assert.doesNotMatch(whileServed, /Traceback/);
  } finally {
    for (const r of runners) await r.stop(2000);
    await start.proc.stop(15_000); // SIGTERM first: npm start then stops its stack (a SIGKILL would leave it running)
  }

  const again = await npmStart(args, env);
  try {
    await again.waitFor(new RegExp(`run agl-run-${RUN} has already finished \\(completed\\); to train it again from scratch: npm start -- --fresh`));
    assert.equal(await again.proc.exited, 0, again.proc.output().slice(-3000));
    assert.doesNotMatch(again.proc.output(), /resuming/);
    assert.match(again.proc.output(), new RegExp(`\\(finished earlier\\) ${RUN}: stopped after`));
  } finally {
    await again.proc.stop(15_000);
  }
});
