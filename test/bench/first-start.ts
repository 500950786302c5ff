// The first `npm start` of a fresh clone: clones this repository's HEAD into a temporary folder (its node_modules
// linked to this one's, i.e. as after `npm ci`; nothing else: no .data, no .temporal, so the Temporal CLI is
// provisioned and the base model is taken or built as a newcomer's would be), runs `npm start` there on the default
// ports and times, from the start, the first progress line of batch 0 and of batch 1 (batch 0 done). With --full
// it lets the run finish and prints its train reward per batch (the README's curve). Needs the default ports free.
//   npm run bench -- first-start [--full] [--json FILE]
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readJsonl, runPaths } from '../../records/run-files';
import { loadAverage, ROOT, writeResult } from './bench-kit';

const args = process.argv.slice(2);
const FULL = args.includes('--full');

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-first-start-'));
  const clone = path.join(dir, 'agl-temporal');
  const cloned = spawnSync('git', ['clone', '--quiet', ROOT, clone], { stdio: 'inherit' });
  if (cloned.status !== 0) throw new Error('git clone failed');
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(clone, 'node_modules'));
  const env = { ...process.env };
  delete env.TEMPORAL_CLI;
  delete env.TEMPORAL_ADDRESS;
  const t0 = Date.now();
  const at: Record<string, number> = {};
  const child = spawn(process.execPath, ['--import', 'tsx', 'dev/main.ts'], { cwd: clone, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let tail = '';
  const done = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const seen = (text: string) => {
    tail = (tail + text).slice(-8000);
    for (const [key, re] of [['batch0', /\bbatch 0\/\d+/], ['batch1', /\bbatch 1\/\d+/], ['base', /base local\/tiny-hello .*(taken|built)/]] as const) {
      if (at[key] === undefined && re.test(text)) {
        at[key] = (Date.now() - t0) / 1000;
        console.log(`${key}: ${at[key].toFixed(1)} s`);
      }
    }
    if (at.batch1 !== undefined && !FULL) process.kill(-child.pid!, 'SIGINT');
  };
  child.stdout.on('data', (d: Buffer) => seen(d.toString()));
  child.stderr.on('data', (d: Buffer) => seen(d.toString()));
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGINT'), 15 * 60_000);
  const code = await done;
  clearTimeout(timer);
  const total = (Date.now() - t0) / 1000;
  const rewards = readJsonl(runPaths(path.join(clone, '.data', 'runs', 'hello')).metrics).map((r) => Number(r['env/all/reward/total']).toFixed(2));
  if (at.batch1 === undefined) console.log(`never reached batch 1 (exit ${code}); last output:\n${tail}`);
  if (FULL) console.log(`run finished in ${total.toFixed(0)} s (exit ${code}); train reward per batch: ${rewards.join(' ')}`);
  console.log(`first npm start: batch 0 at ${at.batch0?.toFixed(1) ?? '-'} s, batch 1 at ${at.batch1?.toFixed(1) ?? '-'} s; load average ${loadAverage()}`);
  writeResult(args, { batch0: at.batch0 ?? null, batch1: at.batch1 ?? null, total: FULL ? total : null, rewards: FULL ? rewards : null, load: loadAverage() });
  rmSync(dir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
