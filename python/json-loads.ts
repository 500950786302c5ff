// Python's `json.loads` (strict, as the cookbook calls it), a port of its scanner: ints and floats kept apart (1.0
// is a PyFloat), ints of any size, keys in the order written (a Map), NaN and Infinity accepted, and errors in
// Python's words and positions ("Expecting value: line 1 column 1 (char 0)", counted in code points).

import { PyFloat, type PyJson } from './values';

export class PyJsonError extends Error {
  override readonly name = 'PyJsonError';
}

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
  value(i: number): [PyJson, number] | null {
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
      const n = Number(m[0]);
      return [Number.isSafeInteger(n) ? n : BigInt(m[0]), end];
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

  object(end: number): [Map<string, PyJson>, number] {
    const s = this.s;
    const out = new Map<string, PyJson>();
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

  array(end: number): [PyJson[], number] {
    const s = this.s;
    const out: PyJson[] = [];
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
export function pyJsonLoads(text: string): PyJson {
  const sc: Scanner = new Scanner(text);
  if (text.startsWith('\ufeff')) sc.fail('Unexpected UTF-8 BOM (decode using utf-8-sig)', 0);
  const start = sc.ws(0);
  const v = sc.value(start);
  if (!v) sc.fail('Expecting value', start);
  const end = sc.ws(v[1]);
  if (end !== text.length) sc.fail('Extra data', end);
  return v[0];
}

/** A value json.loads gave as plain JavaScript (Maps to objects, PyFloat to number, bigint kept). */
export function pyJsonToPlain(v: PyJson): unknown {
  if (v instanceof PyFloat) return v.value;
  if (v instanceof Map) return Object.fromEntries([...v.entries()].map(([k, x]) => [k, pyJsonToPlain(x)]));
  if (Array.isArray(v)) return v.map(pyJsonToPlain);
  return v;
}
