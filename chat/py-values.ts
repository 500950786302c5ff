// Python's json.loads / json.dumps / str() as the cookbook's renderers apply them to tool schemas and tool-call
// arguments, so that what we render is byte-identical to what Python renders. Kept apart from JavaScript's JSON:
// Python keeps ints and floats apart (1 vs 1.0), prints floats as repr does (1e-05, 1e+16), keeps integers of
// any size, keeps keys in the order written (JavaScript puts "1", "2" first), accepts NaN and Infinity, and
// reports errors in its own words ("Expecting value: line 1 column 1 (char 0)").
//
// Values: null, boolean, string, bigint (a Python int), PyFloat (a Python float from parsed text), number (from a
// JavaScript object: an int when integral, else a float), arrays, Map (a parsed object, keys in order) or plain
// objects.

import { PyFloat, pyJsonString } from './py-json';

// One float class for both modules, so values read by either print alike.
export { PyFloat };

export type PyValue = null | boolean | string | number | bigint | PyFloat | PyValue[] | Map<string, PyValue> | { [k: string]: PyValue };

export class PyJsonError extends Error {
  override readonly name = 'PyJsonError';
}

/** Python `repr(float)`: the shortest digits that round-trip, scientific below 1e-4 and from 1e16. */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  const [mant, expText] = Math.abs(x).toExponential().split('e') as [string, string];
  const digits = mant.replace('.', '');
  const exp = Number(expText);
  const decpt = exp + 1; // value = 0.DIGITS x 10^decpt
  if (decpt > 16 || decpt < -3) {
    const e = Math.abs(exp).toString().padStart(2, '0');
    return sign + digits[0] + (digits.length > 1 ? '.' + digits.slice(1) : '') + 'e' + (exp < 0 ? '-' : '+') + e;
  }
  if (decpt <= 0) return sign + '0.' + '0'.repeat(-decpt) + digits;
  if (decpt >= digits.length) return sign + digits + '0'.repeat(decpt - digits.length) + '.0';
  return sign + digits.slice(0, decpt) + '.' + digits.slice(decpt);
}

function isMapping(v: PyValue): v is Map<string, PyValue> | { [k: string]: PyValue } {
  return v instanceof Map || (typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof PyFloat));
}

export function isPyDict(v: PyValue): v is Map<string, PyValue> | { [k: string]: PyValue } {
  return isMapping(v);
}

export function isPyList(v: PyValue): v is PyValue[] {
  return Array.isArray(v);
}

/** The (key, value) pairs of a dict in Python's order. */
export function pyItems(v: Map<string, PyValue> | { [k: string]: PyValue }): [string, PyValue][] {
  return v instanceof Map ? [...v.entries()] : Object.entries(v).filter(([, x]) => x !== undefined);
}

export function pyGet(v: PyValue, key: string): PyValue | undefined {
  if (v instanceof Map) return v.get(key);
  if (isMapping(v)) return (v as Record<string, PyValue>)[key];
  return undefined;
}

function intText(n: number): string {
  return BigInt(n).toString();
}

/** The float a number stands for, or null when it is a Python int. */
function floatOf(v: PyValue): number | null {
  if (v instanceof PyFloat) return v.value;
  if (typeof v === 'number') return Number.isInteger(v) ? null : v;
  return null;
}

/** Python `str(value)` (`{value!s}` and `|string` in Jinja): True, None, 1.0, and lists/dicts as repr. */
export function pyStr(v: PyValue): string {
  if (typeof v === 'string') return v;
  return pyRepr(v);
}

function pyReprString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === quote || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || c === 0x7f) out += '\\x' + c.toString(16).padStart(2, '0');
    else out += ch;
  }
  return out + quote;
}

/** Python `repr(value)` for the JSON-like values here (non-printable unicode is not escaped: a rare case). */
export function pyRepr(v: PyValue): string {
  if (v === null || v === undefined) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'string') return pyReprString(v);
  const f = floatOf(v);
  if (f !== null) return pyFloatRepr(f);
  if (typeof v === 'number') return intText(v);
  if (Array.isArray(v)) return '[' + v.map(pyRepr).join(', ') + ']';
  return '{' + pyItems(v as Map<string, PyValue>).map(([k, x]) => pyReprString(k) + ': ' + pyRepr(x)).join(', ') + '}';
}

/** Python sorts str keys by code point; JavaScript's default sort compares UTF-16 units. */
function byCodePoint(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

export interface DumpOptions {
  ensureAscii?: boolean;
  /** [item separator, key separator]; Python's default is [", ", ": "]. */
  separators?: [string, string];
  sortKeys?: boolean;
}

/** Python `json.dumps(value, ...)` (default: ensure_ascii=True, separators (", ", ": ")). */
export function pyJsonDumps(v: PyValue, opts: DumpOptions = {}): string {
  const ensureAscii = opts.ensureAscii ?? true;
  const [item, key] = opts.separators ?? [', ', ': '];
  const dump = (x: PyValue): string => {
    if (x === null || x === undefined) return 'null';
    if (typeof x === 'boolean') return x ? 'true' : 'false';
    if (typeof x === 'bigint') return x.toString();
    if (typeof x === 'string') return pyJsonString(x, ensureAscii);
    const f = floatOf(x);
    if (f !== null) return Number.isNaN(f) ? 'NaN' : f === Infinity ? 'Infinity' : f === -Infinity ? '-Infinity' : pyFloatRepr(f);
    if (typeof x === 'number') return intText(x);
    if (Array.isArray(x)) return '[' + x.map(dump).join(item) + ']';
    let entries = pyItems(x as Map<string, PyValue>);
    if (opts.sortKeys) entries = [...entries].sort(([a], [b]) => byCodePoint(a, b));
    return '{' + entries.map(([k, y]) => pyJsonString(k, ensureAscii) + key + dump(y)).join(item) + '}';
  };
  return dump(v);
}

// ---- json.loads ----

const WS = new Set([' ', '\t', '\n', '\r']);

class Scanner {
  constructor(readonly s: string) {}

  fail(msg: string, pos: number): never {
    const before = this.s.slice(0, pos);
    const lineno = before.split('\n').length;
    const lastNl = before.lastIndexOf('\n');
    // Python counts code points; JavaScript indexes UTF-16 units.
    const cp = (t: string): number => Array.from(t).length;
    const char = cp(before);
    const colno = lastNl < 0 ? char + 1 : cp(before.slice(lastNl + 1)) + 1;
    throw new PyJsonError(`${msg}: line ${lineno} column ${colno} (char ${char})`);
  }

  ws(i: number): number {
    while (i < this.s.length && WS.has(this.s[i]!)) i++;
    return i;
  }

  /** A value at i, or null (Python's StopIteration) when none starts there. */
  value(i: number): [PyValue, number] | null {
    const s = this.s;
    const c = s[i];
    if (c === undefined) return null;
    if (c === '"') return this.string(i + 1);
    if (c === '{') return this.object(i + 1);
    if (c === '[') return this.array(i + 1);
    if (s.startsWith('null', i)) return [null, i + 4];
    if (s.startsWith('true', i)) return [true, i + 4];
    if (s.startsWith('false', i)) return [false, i + 5];
    if (s.startsWith('NaN', i)) return [new PyFloat(NaN), i + 3];
    if (s.startsWith('Infinity', i)) return [new PyFloat(Infinity), i + 8];
    if (s.startsWith('-Infinity', i)) return [new PyFloat(-Infinity), i + 9];
    const m = /^(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?/.exec(s.slice(i, i + 4096));
    if (m) {
      const end = i + m[0].length;
      if (m[2] !== undefined || m[3] !== undefined) return [new PyFloat(Number(m[0])), end];
      return [BigInt(m[1]!), end];
    }
    return null;
  }

  string(end: number): [string, number] {
    const s = this.s;
    const begin = end - 1;
    let out = '';
    for (;;) {
      let j = end;
      while (j < s.length && s[j] !== '"' && s[j] !== '\\' && s.charCodeAt(j) >= 0x20) j++;
      if (j >= s.length) this.fail('Unterminated string starting at', begin);
      out += s.slice(end, j);
      const t = s[j]!;
      end = j + 1;
      if (t === '"') return [out, end];
      if (t !== '\\') this.fail('Invalid control character at', j);
      const esc = s[end];
      if (esc === undefined) this.fail('Unterminated string starting at', begin);
      if (esc !== 'u') {
        const map: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
        const r = map[esc!];
        if (r === undefined) this.fail('Invalid \\escape', end - 1);
        out += r;
        end += 1;
        continue;
      }
      const hex = (at: number): number => {
        const h = s.slice(at, at + 4);
        if (!/^[0-9a-fA-F]{4}$/.test(h)) this.fail('Invalid \\uXXXX escape', at - 1);
        return parseInt(h, 16);
      };
      let u = hex(end + 1);
      end += 5;
      if (u >= 0xd800 && u <= 0xdbff && s[end] === '\\' && s[end + 1] === 'u') {
        const lo = hex(end + 2);
        if (lo >= 0xdc00 && lo <= 0xdfff) {
          u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
          end += 6;
        }
      }
      out += String.fromCodePoint(u);
    }
  }

  object(end: number): [Map<string, PyValue>, number] {
    const s = this.s;
    const out = new Map<string, PyValue>();
    end = this.ws(end);
    let next = s[end];
    if (next !== '"') {
      if (next === '}') return [out, end + 1];
      this.fail('Expecting property name enclosed in double quotes', end);
    }
    end += 1;
    for (;;) {
      const [k, afterKey] = this.string(end);
      end = this.ws(afterKey);
      if (s[end] !== ':') this.fail("Expecting ':' delimiter", end);
      end = this.ws(end + 1);
      const v = this.value(end);
      if (!v) this.fail('Expecting value', end);
      out.set(k, v[0]);
      end = this.ws(v[1]);
      next = s[end];
      end += 1;
      if (next === '}') return [out, end];
      if (next !== ',') this.fail("Expecting ',' delimiter", end - 1);
      end = this.ws(end);
      next = s[end];
      end += 1;
      if (next !== '"') this.fail('Expecting property name enclosed in double quotes', end - 1);
    }
  }

  array(end: number): [PyValue[], number] {
    const s = this.s;
    const out: PyValue[] = [];
    end = this.ws(end);
    if (s[end] === ']') return [out, end + 1];
    for (;;) {
      const v = this.value(end);
      if (!v) this.fail('Expecting value', end);
      out.push(v[0]);
      end = this.ws(v[1]);
      const next = s[end];
      end += 1;
      if (next === ']') return [out, end];
      if (next !== ',') this.fail("Expecting ',' delimiter", end - 1);
      end = this.ws(end);
    }
  }
}

/** Python `json.loads(text)`; throws PyJsonError with Python's message. */
export function pyJsonLoads(text: string): PyValue {
  const sc: Scanner = new Scanner(text);
  if (text.startsWith('\ufeff')) sc.fail('Unexpected UTF-8 BOM (decode using utf-8-sig)', 0);
  const start = sc.ws(0);
  const v = sc.value(start);
  if (!v) sc.fail('Expecting value', start);
  const end = sc.ws(v[1]);
  if (end !== text.length) sc.fail('Extra data', end);
  return v[0];
}

/** Python `str.strip()` / `lstrip()` / `rstrip()` with no argument: Unicode whitespace as `str.isspace` sees it. */
const PY_SPACE = '[\\t\\n\\x0b\\x0c\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const LEAD = new RegExp('^' + PY_SPACE + '+');
const TRAIL = new RegExp(PY_SPACE + '+$');
export const pyStrip = (s: string): string => s.replace(LEAD, '').replace(TRAIL, '');
export const pyLstrip = (s: string): string => s.replace(LEAD, '');
export const pyRstrip = (s: string): string => s.replace(TRAIL, '');
export const isPySpace = (ch: string): boolean => new RegExp('^' + PY_SPACE + '$').test(ch);
