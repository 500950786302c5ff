// Python value emulation against what CPython 3.11 prints for the same values (the expected strings below are
// Python's own output): json.dumps and repr spell the floats that are not finite differently, json.loads keeps ints
// and floats apart and counts error positions in code points, str.strip() leaves \ufeff alone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PyFloat, PyJsonError, pyJsonDumps, pyJsonLoads, pyRepr, pyStr, pyStrip } from '../../python';

test('json.dumps writes NaN and Infinity; repr writes nan and inf', () => {
  const floats = [NaN, Infinity, -Infinity].map((x) => new PyFloat(x));
  assert.equal(pyJsonDumps([...floats, 1e-5, new PyFloat(1), 10n ** 21n, new PyFloat(1e16), 0.1]), '[NaN, Infinity, -Infinity, 1e-05, 1.0, 1000000000000000000000, 1e+16, 0.1]');
  assert.equal(pyRepr([new PyFloat(NaN), new PyFloat(Infinity), 1e-5, new PyFloat(1e16)]), '[nan, inf, 1e-05, 1e+16]');
  assert.equal(pyStr(new PyFloat(-Infinity)), '-inf');
  assert.equal(pyStr(1.5), '1.5');
});

test("numbers: 'javascript' writes JSON.stringify's digits, the default Python's", () => {
  const row = { lr: 1e-5, kl: 1e-7, big: 1e21, nan: NaN };
  assert.equal(pyJsonDumps(row), '{"lr": 1e-05, "kl": 1e-07, "big": 1000000000000000000000, "nan": NaN}');
  assert.equal(pyJsonDumps(row, { numbers: 'javascript' }), '{"lr": 0.00001, "kl": 1e-7, "big": 1e+21, "nan": NaN}');
  assert.equal(pyJsonDumps(new PyFloat(2), { numbers: 'javascript' }), '2.0');
});

test('json.dumps options: ensure_ascii, separators, sort_keys; no form for a function', () => {
  assert.equal(pyJsonDumps({ b: 'é', a: [1] }), '{"b": "\\u00e9", "a": [1]}');
  assert.equal(pyJsonDumps({ b: 'é', a: [1] }, { ensureAscii: false, separators: [',', ':'], sortKeys: true }), '{"a":[1],"b":"é"}');
  assert.throws(() => pyJsonDumps({ f: () => 1 }), TypeError);
});

test('json.loads keeps float against int, big ints and key order', () => {
  const v = pyJsonLoads('{"2": 1.0, "1": 3, "big": 12345678901234567890, "x": NaN}') as Map<string, unknown>;
  assert.deepEqual([...v.keys()], ['2', '1', 'big', 'x']);
  assert.ok(v.get('2') instanceof PyFloat);
  assert.equal(v.get('1'), 3);
  assert.equal(v.get('big'), 12345678901234567890n);
  assert.equal(pyJsonDumps(v), '{"2": 1.0, "1": 3, "big": 12345678901234567890, "x": NaN}');
});

test("json.loads errors are Python's, positions in code points", () => {
  assert.throws(() => pyJsonLoads('["\u{1F600}", x]'), (e: unknown) => e instanceof PyJsonError && e.message === 'Expecting value: line 1 column 7 (char 6)');
  assert.throws(() => pyJsonLoads('\ufeff[]'), { message: 'Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)' });
});

test("repr quotes and escapes strings as Python does", () => {
  assert.equal(pyRepr(["it's", 'a"b\'c', '\x85\xa0\xad\u200b\u2028\ufeff\u{e0001} é', null, true]), `["it's", 'a"b\\'c', '\\x85\\xa0\\xad\\u200b\\u2028\\ufeff\\U000e0001 é', None, True]`);
});

test('str.strip() strips what str.isspace() calls space, not \\ufeff', () => {
  assert.equal(pyStrip(' \ufeffa\u3000 '), '\ufeffa');
});
