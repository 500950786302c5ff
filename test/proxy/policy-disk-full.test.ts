// The proxy's saved policy on a full disk (proxy/policy-file.ts): a switch whose save fails still switches (calls
// are served from memory), leaves no half-written file, and says so: one log line naming the file, and health
// status disk_full until a later save succeeds. Before, the ENOSPC went up through onSwitch and failed the switch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PolicyFile } from '../../proxy/policy-file';
import { mountSmallVolume } from '../helpers/small-volume';
import { post, startHarness } from './helpers';

const P = (n: number) => ({ switchId: `batch-${n}`, modelName: 'local/tiny-hello', samplerPath: `tinker://run/sampler_weights/00000${n}`, baseModel: 'local/tiny-hello', renderer: 'role_colon', sampling: { temperature: 0.7, topK: 20, topP: 0.95, maxTokens: 64 } });
const MSG = { messages: [{ role: 'user', content: 'hi' }] };

test('a policy switch on a full disk is served, said in the log and in health (disk_full), and saved once space is back', { timeout: 60_000 }, async () => {
  const volume = mountSmallVolume(256 * 1024);
  const lines: string[] = [];
  const file = path.join(volume.dir, 'proxy', 'policy.json');
  const onDisk = new PolicyFile(file, (l) => lines.push(l));
  const h = await startHarness({ onSwitch: (spec) => onDisk.save(spec), degraded: () => onDisk.health() });
  const health = async () => (await (await fetch(`${h.proxy.url}/health`)).json()) as { status: string; detail?: string; policy: string };
  try {
    assert.equal((await post(`${h.proxy.url}/admin/policy`, P(1))).status, 200);
    assert.equal(JSON.parse(readFileSync(file, 'utf8')).switchId, 'batch-1');
    assert.equal((await health()).status, 'ok');

    volume.fill();
    const s = await post(`${h.proxy.url}/admin/policy`, P(2));
    assert.equal(s.status, 200, s.text);
    assert.equal(s.json.policy.switchId, 'batch-2', 'the switch happened');
    const call = await post(`${h.proxy.url}/v1/chat/completions`, MSG);
    assert.equal(call.headers.get('x-agl-policy'), 'batch-2', 'calls are served with the new policy');
    const hd = await health();
    assert.equal(hd.status, 'disk_full');
    assert.match(hd.detail ?? '', /disk is full: saving policy\.json .*ENOSPC/);
    assert.doesNotMatch(hd.detail ?? '', /\n/);
    assert.equal(JSON.parse(readFileSync(file, 'utf8')).switchId, 'batch-1', 'the older file is whole');
    assert.deepEqual(readdirSync(path.dirname(file)).filter((f) => f.endsWith('.tmp')), [], 'no half-written file');
    assert.equal(lines.filter((l) => /disk is full/.test(l)).length, 1, lines.join('\n'));

    volume.free();
    assert.equal((await post(`${h.proxy.url}/admin/policy`, P(3))).status, 200);
    assert.equal((await health()).status, 'ok');
    assert.equal(JSON.parse(readFileSync(file, 'utf8')).switchId, 'batch-3');
    assert.ok(lines.some((l) => /saved again/.test(l)));
  } finally {
    await h.close();
    volume.unmount();
    assert.equal(existsSync(volume.dir), false);
  }
});
