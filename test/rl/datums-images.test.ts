// A vision prompt's images through trajectory → datum (cookbook trajectory_to_data keeps image chunks as single
// elements of their length): images stay at their positions, a later turn merges only when it shows the same
// images in the same places, and the Tinker input is text runs with each image chunk in its place.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sequenceChunks, trajectoryToData } from '../../rl/datums';
import { reconstructTransitions } from '../../rl/transitions';
import type { SequenceImage, Transition } from '../../rl/types';

const img = (at: number, data: string, n = 3): SequenceImage => ({ at, data, format: 'png', expected_tokens: n });
const t = (ob: number[], ac: number[], obImages?: SequenceImage[]): Transition => ({
  ob, acTokens: ac, acLogprobs: ac.map(() => -0.5), reward: 0, episodeDone: false, metrics: {}, ...(obImages ? { obImages } : {}),
});

test('two turns over the same image merge into one datum that keeps the image once, in its place', () => {
  const first = t([1, 0, 0, 0, 2], [3], [img(1, 'AAAA')]);
  const second = t([1, 0, 0, 0, 2, 3, 4], [5], [img(1, 'AAAA')]);
  const [d, ...rest] = trajectoryToData({ transitions: [first, second], finalOb: [] }, 1);
  assert.equal(rest.length, 0);
  assert.deepEqual(d!.images, [img(1, 'AAAA')]);
  assert.deepEqual(d!.modelInput, [1, 0, 0, 0, 2, 3, 4]);
  assert.deepEqual(sequenceChunks(d!.modelInput, d!.images!), [
    { type: 'encoded_text', tokens: [1] },
    { type: 'image', data: 'AAAA', format: 'png', expected_tokens: 3 },
    { type: 'encoded_text', tokens: [2, 3, 4] },
  ]);
});

test('a turn whose prompt has the same ids but another image does not extend the sequence: a new datum', () => {
  const first = t([1, 0, 0, 0, 2], [3], [img(1, 'AAAA')]);
  const second = t([1, 0, 0, 0, 2, 3, 4], [5], [img(1, 'BBBB')]);
  const data = trajectoryToData({ transitions: [first, second], finalOb: [] }, 1);
  assert.equal(data.length, 2);
  assert.deepEqual(data.map((d) => d.images![0]!.data), ['AAAA', 'BBBB']);
});

test('an image added by a later turn joins the datum at its position; text-only datums carry no images', () => {
  const first = t([1, 2], [3]);
  const second = t([1, 2, 3, 7, 0, 0, 0, 8], [9], [img(4, 'CCCC')]);
  const [d] = trajectoryToData({ transitions: [first, second], finalOb: [] }, 1);
  assert.deepEqual(d!.images, [img(4, 'CCCC')]);
  assert.equal(trajectoryToData({ transitions: [first], finalOb: [] }, 1)[0]!.images, undefined);
  assert.throws(() => sequenceChunks([1, 2], [img(1, 'AAAA')]), /does not fit/);
});

test('triplets: the proxy\'s images become the observation\'s; images that do not fit the prompt skip the triplet, counted', () => {
  const good = { at: 1, data: 'AAAA', format: 'png', expected_tokens: 2 };
  const triplet = (images: unknown) => ({ prompt: { token_ids: [1, 0, 0, 2], images }, response: { token_ids: [3], logprobs: [{ token: 'x', logprob: -1 }] }, reward: 1, metadata: {} });
  const ok = reconstructTransitions([triplet([good]) as never]);
  assert.deepEqual(ok.trajectory.transitions[0]!.obImages, [good]);
  const bad = reconstructTransitions([triplet([{ ...good, at: 3 }]) as never]);
  assert.equal(bad.trajectory.transitions.length, 0);
  assert.equal(bad.notes.skippedNoTokenIds, 1);
});
