// The Python Agent-lightning v0.3.0 environment for the store interop tests. OpenTelemetry is pinned to 1.38
// (contemporary with agentlightning 0.3.0): from 1.40 on the OTLP HTTP exporter lost the `_headers` attribute the
// AgentOps exporter relies on, and every span export fails. fastapi is pinned so pip need not backtrack (~2 min).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { ensureVenv, type Venv } from '../helpers/python';

export const AGL_PACKAGES = [
  'agentlightning==0.3.0',
  'fastapi==0.141.1',
  'opentelemetry-api==1.38.0',
  'opentelemetry-sdk==1.38.0',
  'opentelemetry-exporter-otlp==1.38.0',
  'opentelemetry-exporter-otlp-proto-http==1.38.0',
  'opentelemetry-exporter-otlp-proto-grpc==1.38.0',
  'opentelemetry-exporter-otlp-proto-common==1.38.0',
  'opentelemetry-proto==1.38.0',
  'opentelemetry-semantic-conventions==0.59b0',
  'opentelemetry-instrumentation==0.59b0',
];

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
