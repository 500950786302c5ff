// Our client follows the trainer's client/config flags: forward_backward split into chunks (by datums and by
// bytes), sent in parallel and zstd-compressed, gives the same losses, logprobs and training as one plain request;
// a client attached to a sampling session joins it for its clone id; close() finishes the session, after which
// the trainer answers its heartbeat 410. Checkpoint TTLs: set at save, changed and removed with PUT …/ttl, listed,
// refused out of range, and past their expiry gone.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceClient } from '../../tinker';
import { chunkData, combineResults, estimateDatumBytes } from '../../tinker/fwdbwd-chunks';
import { retryAfterSeconds, transportDelayMs } from '../../tinker/retry-rules';
import type { TrainerServer } from '../../trainer/server/server';
import { TEST_MODEL, startTestTrainer, tempDir, textDatum } from './helpers';
import { startRecordingProxy } from './recording-proxy';

const batch = ['Hello, world!\n', 'Hello there, tinker.\n', 'One more line.\n', 'And a fourth.\n', 'Five.\n'].map(textDatum);
const ADAM = { learningRate: 0.05, eps: 1e-8 };

async function trainTwice(url: string): Promise<{ before: number; after: number; logprobs: number[][] }> {
  const sc = new ServiceClient({ baseUrl: url, apiKey: 'tml-flags' });
  try {
    const tc = await sc.createLoraTrainingClient(TEST_MODEL, { rank: 4, seed: 7 });
    const fb = tc.forwardBackward(batch, 'cross_entropy');
    const opt = tc.optimStep(ADAM);
    const first = await fb;
    await opt;
    const second = await tc.forward(batch, 'cross_entropy');
    return { before: first.metrics['loss:sum'], after: second.metrics['loss:sum'], logprobs: first.lossFnOutputs.map((o) => o.logprobs) };
  } finally {
    await sc.close();
  }
}

describe('client/config flags', () => {
  const plainDir = tempDir('tinker-flags-plain-');
  const flagDir = tempDir('tinker-flags-on-');
  let plain: TrainerServer;
  let flagged: TrainerServer;
  before(async () => {
    plain = await startTestTrainer({ dataDir: plainDir.dir });
    // Chunks of at most 2 datums or 300 estimated bytes, all sent at once (the first last), compressed.
    flagged = await startTestTrainer({
      dataDir: flagDir.dir,
      clientFlags: { fwdbwd_max_chunk_len: 2, fwdbwd_max_chunk_bytes_count: 300, parallel_fwdbwd_chunks: true, proto_compress_fwdbwd: true, sample_join_sampling_session: true },
    });
  });
  after(async () => {
    await plain.close();
    await flagged.close();
    plainDir.remove();
    flagDir.remove();
  });

  test('chunked, parallel, compressed forward_backward trains exactly as one plain request', async () => {
    const proxy = await startRecordingProxy(flagged.url);
    try {
      const chunked = await trainTwice(proxy.url);
      const whole = await trainTwice(plain.url);
      assert.deepEqual(chunked, whole);
      const fbs = proxy.calls('/forward_backward', 'POST');
      const expected = chunkData(batch, { fwdbwdMaxChunkLen: 2, fwdbwdMaxChunkBytesCount: 300 }).length;
      assert.ok(expected >= 3, `the batch splits (${expected} chunks)`);
      assert.equal(fbs.length, 2 * expected, 'one request per chunk, for forward_backward and for forward');
      assert.ok(fbs.every((r) => r.headers['content-encoding'] === 'zstd'));
    } finally {
      await proxy.close();
    }
  });

  test('a client attached to a sampling session asks join_sampling_session for its seq_id block', async () => {
    const proxy = await startRecordingProxy(flagged.url);
    const sc = new ServiceClient({ baseUrl: proxy.url, apiKey: 'tml-flags' });
    try {
      const base = await sc.createSamplingClient({ baseModel: TEST_MODEL });
      const attached = sc.samplingClient(base.samplingSessionId);
      await attached.sample([1, 2, 3], 1, { maxTokens: 2, seed: 1 });
      await attached.sample([1, 2, 3], 1, { maxTokens: 2, seed: 1 });
      assert.equal(proxy.calls('/join_sampling_session').length, 1);
      const seqs = proxy.calls('/asample').map((r) => (JSON.parse(r.body.toString()) as { seq_id: number }).seq_id);
      assert.deepEqual(seqs, [1_000_000_000, 1_000_000_001], 'clone 1 of the session');
    } finally {
      await sc.close();
      await proxy.close();
    }
  });

  test('close() finishes the session; its heartbeat is then answered 410', async () => {
    const sc = new ServiceClient({ baseUrl: plain.url, apiKey: 'tml-flags' });
    const session = await sc.session();
    await sc.close('interrupted', 'test over');
    assert.equal(plain.service.sessions.get(session.id)?.finished?.status, 'interrupted');
    await sc.close('success'); // a second close says nothing more
    const res = await fetch(`${plain.url}/api/v1/session_heartbeat`, { method: 'POST', body: JSON.stringify({ session_id: session.id }), signal: AbortSignal.timeout(5000) });
    assert.equal(res.status, 410);
  });

  test('checkpoint TTLs: at save, changed, removed, listed, refused out of range, gone past expiry', async () => {
    const sc = new ServiceClient({ baseUrl: plain.url, apiKey: 'tml-flags' });
    try {
      const tc = await sc.createLoraTrainingClient(TEST_MODEL, { rank: 4, seed: 1 });
      const kept = await tc.saveState('kept');
      const short = await tc.saveState('short', { ttlSeconds: 7200 });
      const sampler = await tc.saveWeightsForSampler('s', { ttlSeconds: 3600 });
      const expiry = async (p: string) => (await sc.listCheckpoints(tc.modelId)).find((c) => c.tinkerPath === p)?.expiresAt;
      assert.equal(await expiry(kept), null);
      const inTwoHours = Date.parse((await expiry(short))!) - Date.now();
      assert.ok(inTwoHours > 3600_000 && inTwoHours <= 7200_000, `expires in ${inTwoHours} ms`);
      await sc.setCheckpointTtl(kept, 86_400);
      assert.notEqual(await expiry(kept), null);
      await sc.setCheckpointTtl(kept, null);
      assert.equal(await expiry(kept), null);
      await assert.rejects(sc.setCheckpointTtl(short, 60), RangeError);
      const refused = await fetch(`${plain.url}/api/v1/training_runs/${tc.modelId}/checkpoints/weights/short/ttl`, { method: 'PUT', body: JSON.stringify({ ttl_seconds: 5 }), signal: AbortSignal.timeout(5000) });
      assert.equal(refused.status, 400);
      assert.match(await refused.text(), /ttl_seconds must be/);
      // Three hours later: the two short-lived ones are gone, the kept one stays.
      const gone = await plain.service.checkpoints.sweepExpired(Date.now() + 3 * 3600_000);
      assert.deepEqual(gone.sort(), [sampler, short].sort());
      assert.deepEqual((await sc.listCheckpoints(tc.modelId)).map((c) => c.tinkerPath), [kept]);
    } finally {
      await sc.close();
    }
  });
});

test('chunk results merge as the SDK merges them', () => {
  const part = (n: number, metrics: Record<string, number>) => ({ lossFnOutputType: 'ArrayRecord', lossFnOutputs: Array.from({ length: n }, () => ({ logprobs: [n] })), metrics });
  const merged = combineResults([
    part(1, { 'loss:sum': 1, 'acc:mean': 1, 'm:max': 1, 'm:min': 1, 'x:unique': 7, 'odd:weird': 1, 'only:sum': 1 }),
    part(3, { 'loss:sum': 2, 'acc:mean': 0, 'm:max': 5, 'm:min': 5, 'x:unique': 8, 'odd:weird': 1 }),
  ]);
  assert.deepEqual(merged.metrics, { 'loss:sum': 3, 'acc:mean': 0.25, 'm:max': 5, 'm:min': 1, 'x:unique': 7, 'x:unique_1': 8 });
  assert.equal(merged.lossFnOutputs.length, 4);
  assert.equal(estimateDatumBytes({ modelInput: [1, 2, 3], lossFnInputs: { target_tokens: [1, 2, 3], weights: [1, 1, 1] } }), 3 * 4 + 3 * 8 + 3 * 4);
});

test('Retry-After as the SDK reads it: ms first, then seconds or a date, honoured only within (0, 60] s', () => {
  const h = (o: Record<string, string>) => new Headers(o);
  assert.equal(retryAfterSeconds(h({ 'retry-after-ms': '1500', 'retry-after': '9' })), 1.5);
  assert.equal(retryAfterSeconds(h({ 'retry-after': '3' })), 3);
  const now = Date.UTC(2026, 11, 3, 12, 0, 0);
  assert.equal(retryAfterSeconds(h({ 'retry-after': new Date(now + 20_000).toUTCString() }), now), 20);
  assert.equal(transportDelayMs(0, h({ 'retry-after': '3' })), 3000);
  // Out of range or absent: the exponential backoff, 0.5 s doubling to 10 s, less up to 25 % jitter.
  assert.equal(transportDelayMs(0, h({ 'retry-after': '120' }), () => 0), 500);
  assert.equal(transportDelayMs(2, undefined, () => 1), 1500);
  assert.equal(transportDelayMs(9, undefined, () => 0), 10_000);
});
