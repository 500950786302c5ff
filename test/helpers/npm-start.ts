// `npm start` (dev/main.ts) as a user runs it, in a temporary data folder on free ports, with a prebuilt workflow
// bundle so its worker starts in seconds; and waiting for what it prints.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startProcess, type ManagedProcess } from '../../common/processes';
import { ROOT } from './commands';
import { workflowBundle } from './temporal';

export interface NpmStart {
  proc: ManagedProcess;
  /** Resolves with the first match of `pattern` in everything printed so far (waiting up to `timeoutMs`). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
}

/** Environment for `npm start` in tests: every port free, no Temporal server or Tinker key taken from ours. */
export async function npmStartEnv(extra: NodeJS.ProcessEnv = {}): Promise<NodeJS.ProcessEnv> {
  const { TEMPORAL_ADDRESS: _a, TINKER_API_KEY: _k, TINKER_BASE_URL: _u, ...env } = process.env;
  const bundleFile = path.join(mkdtempSync(path.join(tmpdir(), 'agl-bundle-')), 'workflows.js');
  writeFileSync(bundleFile, (await workflowBundle()).code);
  return {
    ...env, TEMPORAL_PORT: '0', TEMPORAL_UI_PORT: '0', STORE_PORT: '0', TRAINER_PORT: '0', PROXY_PORT: '0',
    AGL_WORKFLOW_BUNDLE: bundleFile, ...extra,
  };
}

export async function npmStart(args: string[], env: NodeJS.ProcessEnv): Promise<NpmStart> {
  const proc = await startProcess({ name: 'npm-start', command: process.execPath, args: ['--import', 'tsx', 'dev/main.ts', ...args], cwd: ROOT, env });
  return {
    proc,
    async waitFor(pattern, timeoutMs = 300_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = proc.output().match(pattern);
        if (m) return m;
        if (proc.child.exitCode !== null) throw new Error(`npm start exited (${proc.child.exitCode}) before printing ${pattern}:\n${proc.output().slice(-4000)}`);
        if (Date.now() > deadline) throw new Error(`npm start printed nothing matching ${pattern} within ${timeoutMs} ms:\n${proc.output().slice(-4000)}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    },
  };
}
