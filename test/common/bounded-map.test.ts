import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BoundedMap } from '../../common/bounded-map';

const keys = (m: Map<string, number>) => [...m.keys()];

test('insertion order: the first written goes first; a rewrite keeps its place', () => {
  const m = new BoundedMap<string, number>(2);
  m.set('a', 1).set('b', 2);
  m.set('a', 3);
  m.get('a');
  m.set('c', 4);
  assert.deepEqual(keys(m), ['b', 'c']);
  assert.equal(m.get('a'), undefined);
});

test('write order: a rewrite makes the entry newest; a get does not', () => {
  const m = new BoundedMap<string, number>(2, { order: 'write' });
  m.set('a', 1).set('b', 2);
  m.set('a', 3);
  m.get('b');
  m.set('c', 4);
  assert.deepEqual(keys(m), ['a', 'c']);
  assert.equal(m.get('a'), 3);
});

test('use order: a get makes the entry newest (least recently used goes)', () => {
  const m = new BoundedMap<string, number>(2, { order: 'use' });
  m.set('a', 1).set('b', 2);
  assert.equal(m.get('a'), 1);
  m.set('c', 3);
  assert.deepEqual(keys(m), ['a', 'c']);
  assert.equal(m.get('missing'), undefined);
  assert.equal(m.peek('a'), 1);
  m.set('d', 4);
  assert.deepEqual(keys(m), ['c', 'd'], 'a peek is not a use');
});

test('the bound holds, onEvict sees each dropped entry and not deletes', () => {
  const dropped: string[] = [];
  const m = new BoundedMap<string, number>(3, { onEvict: (k, v) => dropped.push(`${k}=${v}`) });
  for (let i = 0; i < 10; i++) m.set(`k${i}`, i);
  m.delete('k9');
  assert.equal(m.size, 2);
  assert.deepEqual(dropped, ['k0=0', 'k1=1', 'k2=2', 'k3=3', 'k4=4', 'k5=5', 'k6=6']);
});

test('max must be a whole number; 0 keeps nothing', () => {
  const none = new BoundedMap<string, number>(0);
  none.set('a', 1);
  assert.equal(none.size, 0);
  assert.throws(() => new BoundedMap(-1), RangeError);
  assert.throws(() => new BoundedMap(1.5), RangeError);
});
