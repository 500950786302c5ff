// The Python Agent-lightning v0.3.0 environment for the interop tests: the pins users install,
// agents/python/constraints-agl-0.3.txt (why OpenTelemetry stays at 1.38 is written there).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ensureVenv, type Venv } from '../helpers/python';

export const AGL_CONSTRAINTS = path.resolve(__dirname, '..', '..', 'agents', 'python', 'constraints-agl-0.3.txt');

/** The pinned packages of the constraints file, in its order (`pip install -r` of the file installs exactly these). */
export const AGL_PACKAGES = readFileSync(AGL_CONSTRAINTS, 'utf8')
  .split('\n')
  .map((l) => l.replace(/#.*/, '').trim())
  .filter(Boolean);

export const aglVenv = (): Promise<Venv> => ensureVenv('agl-0.3.0', AGL_PACKAGES);

/** Environment for Python peers: no network look-ups at import (LiteLLM's cost map), unbuffered output. */
export const pythonEnv = (): NodeJS.ProcessEnv => ({
  ...process.env, LITELLM_LOCAL_MODEL_COST_MAP: 'True', PYTHONUNBUFFERED: '1', AGENTOPS_LOGGING_LEVEL: 'WARNING',
});

export const HERE = __dirname;

/** Runs a Python script to completion (asynchronously: the in-process store must keep serving meanwhile). */
export function runPython(python: string, script: string, args: string[], timeoutMs = 180_000): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(python, [path.join(HERE, script), ...args], { env: pythonEnv(), timeout: timeoutMs, maxBuffer: 32 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${script} failed: ${err.message}\n${stderr.slice(-4000)}`));
      else resolve({ stdout, stderr });
    });
  });
}
