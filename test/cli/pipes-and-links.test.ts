// The client as a Unix tool: a reader that goes away (`npm run client -- status hello | head -1`) ends it quietly
// with its exit code instead of an EPIPE stack trace; UI links point where the server's UI is (TEMPORAL_UI_URL,
// else beside the server's address, as the dev server puts it), not always at 127.0.0.1:8233.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { temporalSettings, workflowUiLink } from '../../common/temporal-settings';

test('a closed stdout (| head -1) ends the client quietly, exit 0', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, '..', '..', 'client.ts'), '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.destroy(); // the reader is gone before the client writes
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  assert.equal(code, 0, stderr);
  assert.doesNotMatch(stderr, /EPIPE|Unhandled/);
});

test('UI links: TEMPORAL_UI_URL when set, else the UI beside the server the client talks to', () => {
  const at = (address: string, env: NodeJS.ProcessEnv = {}) => workflowUiLink(temporalSettings({ address }, env), 'agl-run-hello');
  assert.equal(at('127.0.0.1:7233'), 'http://127.0.0.1:8233/namespaces/default/workflows/agl-run-hello');
  assert.equal(at('127.0.0.1:17233'), 'http://127.0.0.1:18233/namespaces/default/workflows/agl-run-hello');
  assert.equal(at('temporal.internal:7233'), 'http://temporal.internal:8233/namespaces/default/workflows/agl-run-hello');
  assert.equal(at('127.0.0.1:7233', { TEMPORAL_UI_URL: 'https://ui.example/' }), 'https://ui.example/namespaces/default/workflows/agl-run-hello');
});
