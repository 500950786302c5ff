// Python's json module in TypeScript, so JSON the renderers embed matches the cookbook token for token:
// `json.dumps` with default settings (separators ", " and ": ", ensure_ascii=True) and `json.loads`, which
// keeps what JavaScript loses: float vs int (1.0 stays 1.0), big ints, key order of objects (a Map), NaN.

/** A JSON number Python reads as a float (it had a fraction or an exponent). */
export class PyFloat {
  constructor(readonly value: number) {}
}

export class PyJsonError extends Error {
  override readonly name = 'PyJsonError';
}

/** A string as Python's json.dumps writes it (ensure_ascii escapes everything beyond ASCII as \\uXXXX). */
export function pyJsonString(s: string, ensureAscii = true): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i];
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (c < 0x20 || (ensureAscii && c > 0x7e)) out += '\\u' + c.toString(16).padStart(4, '0');
    else out += ch;
  }
  return out + '"';
}

/** Python `repr(float)`: shortest round-trip digits, fixed between 1e-4 and 1e16, else d.ddde+XX. */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  const [mant, expPart] = Math.abs(x).toExponential().split('e');
  const digits = mant!.replace('.', '');
  const e = Number(expPart);
  if (x !== 0 && (e < -4 || e >= 16)) {
    const exp = (e < 0 ? '-' : '+') + String(Math.abs(e)).padStart(2, '0');
    return sign + digits[0] + (digits.length > 1 ? '.' + digits.slice(1) : '') + 'e' + exp;
  }
  if (x === 0) return sign + '0.0';
  if (e < 0) return sign + '0.' + '0'.repeat(-e - 1) + digits;
  const intPart = digits.slice(0, e + 1).padEnd(e + 1, '0');
  const frac = digits.slice(e + 1);
  return sign + intPart + '.' + (frac || '0');
}

function pyNumber(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return 'Infinity';
  if (n === -Infinity) return '-Infinity';
  return JSON.stringify(n);
}

/**
 * `json.dumps(value)`; with ensureAscii false, `json.dumps(value, ensure_ascii=False)` (HF's `tojson`).
 * `separators` as Python's (default ", " and ": ").
 */
export function pyJsonDumps(value: unknown, ensureAscii = true, separators: [string, string] = [', ', ': ']): string {
  const [item, key] = separators;
  const dump = (v: unknown): string => {
    if (v === null || v === undefined) return 'null';
    if (typeof v === 'boolean') return v ? 'true' : 'false';
    if (typeof v === 'number') return pyNumber(v);
    if (typeof v === 'bigint') return v.toString();
    if (v instanceof PyFloat) return pyFloatRepr(v.value);
    if (typeof v === 'string') return pyJsonString(v, ensureAscii);
    if (Array.isArray(v)) return '[' + v.map(dump).join(item) + ']';
    if (v instanceof Map) return '{' + [...v.entries()].map(([k, x]) => pyJsonString(String(k), ensureAscii) + key + dump(x)).join(item) + '}';
    if (typeof v === 'object') {
      const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
      return '{' + entries.map(([k, x]) => pyJsonString(k, ensureAscii) + key + dump(x)).join(item) + '}';
    }
    throw new TypeError(`cannot serialise ${typeof v} as JSON`);
  };
  return dump(value);
}

/** A value read by pyJsonLoads: objects are Maps (key order kept), floats PyFloat, unsafe ints bigint. */
export type PyJson = null | boolean | number | bigint | PyFloat | string | PyJson[] | Map<string, PyJson>;

/** Python `json.loads` (strict): errors are PyJsonError with Python's message and position. */
export function pyJsonLoads(text: string): PyJson {
  let i = 0;
  const where = (at: number): string => {
    const before = text.slice(0, at);
    const line = before.split('\n').length;
    const col = at - (before.lastIndexOf('\n') + 1) + 1;
    return `line ${line} column ${col} (char ${at})`;
  };
  const fail = (msg: string, at: number): never => {
    throw new PyJsonError(`${msg}: ${where(at)}`);
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const value = (): PyJson => {
    ws();
    const c = text[i];
    if (c === '"') return str();
    if (c === '{') return obj();
    if (c === '[') return arr();
    if (text.startsWith('null', i)) return (i += 4), null;
    if (text.startsWith('true', i)) return (i += 4), true;
    if (text.startsWith('false', i)) return (i += 5), false;
    if (text.startsWith('NaN', i)) return (i += 3), new PyFloat(NaN);
    if (text.startsWith('Infinity', i)) return (i += 8), new PyFloat(Infinity);
    if (text.startsWith('-Infinity', i)) return (i += 9), new PyFloat(-Infinity);
    const m = /^-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/.exec(text.slice(i));
    if (!m) return fail('Expecting value', i);
    i += m[0].length;
    if (m[1] !== undefined || m[2] !== undefined) return new PyFloat(Number(m[0]));
    const n = Number(m[0]);
    return Number.isSafeInteger(n) ? n : BigInt(m[0]);
  };
  const str = (): string => {
    const start = i;
    i++;
    let out = '';
    for (;;) {
      if (i >= text.length) fail('Unterminated string starting at', start);
      const ch = text[i]!;
      if (ch === '"') {
        i++;
        return out;
      }
      if (ch === '\\') {
        const e = text[i + 1];
        const map: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
        if (e === 'u') {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('Invalid \\uXXXX escape', i + 1);
          out += String.fromCharCode(parseInt(hex, 16));
          i += 6;
        } else if (e !== undefined && map[e] !== undefined) {
          out += map[e];
          i += 2;
        } else fail('Invalid \\escape', i);
        continue;
      }
      if (ch.charCodeAt(0) < 0x20) fail('Invalid control character at', i);
      out += ch;
      i++;
    }
  };
  const obj = (): Map<string, PyJson> => {
    const out = new Map<string, PyJson>();
    i++;
    ws();
    if (text[i] === '}') return i++, out;
    for (;;) {
      ws();
      if (text[i] !== '"') fail('Expecting property name enclosed in double quotes', i);
      const k = str();
      ws();
      if (text[i] !== ':') fail("Expecting ':' delimiter", i);
      i++;
      out.set(k, value());
      ws();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === '}') return i++, out;
      fail("Expecting ',' delimiter", i);
    }
  };
  const arr = (): PyJson[] => {
    const out: PyJson[] = [];
    i++;
    ws();
    if (text[i] === ']') return i++, out;
    for (;;) {
      out.push(value());
      ws();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === ']') return i++, out;
      fail("Expecting ',' delimiter", i);
    }
  };
  const v = value();
  ws();
  if (i !== text.length) fail('Extra data', i);
  return v;
}

/** A PyJson value as plain JavaScript (Maps to objects, PyFloat to number, bigint kept). */
export function pyJsonToPlain(v: PyJson): unknown {
  if (v instanceof PyFloat) return v.value;
  if (v instanceof Map) return Object.fromEntries([...v.entries()].map(([k, x]) => [k, pyJsonToPlain(x)]));
  if (Array.isArray(v)) return v.map(pyJsonToPlain);
  return v;
}
