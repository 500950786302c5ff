// Python's `json.dumps`, so JSON embedded in a prompt matches the cookbook's token for token: separators ", " and
// ": ", ensure_ascii (everything beyond ASCII as \uXXXX), floats as repr writes them (1.0 stays 1.0 when read as a
// PyFloat, 1e-05), ints of any size, keys in the order given, NaN and Infinity as Python spells them in JSON.

import { pyJsonFloat } from './float-text';
import { floatOf, intText, pyItems, type PyDict, type PyValue } from './values';

export interface DumpsOptions {
  /** Python's ensure_ascii (default true); false is HF's `tojson`. */
  ensureAscii?: boolean;
  /** [item separator, key separator]; Python's default is [", ", ": "]. */
  separators?: [string, string];
  sortKeys?: boolean;
  /**
   * How a JavaScript number is written. 'python' (the default): an integral number as a Python int, any other as
   * a Python float (1e-05). 'javascript': the digits JSON.stringify writes (0.00001, 1e+21), as a run's record
   * files are written. A PyFloat is always written as Python writes a float.
   */
  numbers?: 'python' | 'javascript';
}

/** A string as Python's json.dumps writes it (with ensureAscii, everything beyond ASCII as \uXXXX). */
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

/** Python sorts str keys by code point; JavaScript's default sort compares UTF-16 units. */
function byCodePoint(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

function javascriptNumber(n: number): string {
  return Number.isFinite(n) ? JSON.stringify(n) : pyJsonFloat(n);
}

/** Python `json.dumps(value, ...)`; a function, symbol or other value JSON has no form for is a TypeError. */
export function pyJsonDumps(value: unknown, opts: DumpsOptions = {}): string {
  const ensureAscii = opts.ensureAscii ?? true;
  const [item, key] = opts.separators ?? [', ', ': '];
  const jsNumbers = opts.numbers === 'javascript';
  const dump = (x: unknown): string => {
    if (x === null || x === undefined) return 'null';
    if (typeof x === 'boolean') return x ? 'true' : 'false';
    if (typeof x === 'bigint') return x.toString();
    if (typeof x === 'string') return pyJsonString(x, ensureAscii);
    if (typeof x === 'number' && jsNumbers) return javascriptNumber(x);
    if (typeof x === 'function' || typeof x === 'symbol') throw new TypeError(`cannot serialise ${typeof x} as JSON`);
    const f = floatOf(x as PyValue);
    if (f !== null) return pyJsonFloat(f);
    if (typeof x === 'number') return intText(x);
    if (Array.isArray(x)) return '[' + x.map(dump).join(item) + ']';
    let entries = pyItems(x as PyDict);
    if (opts.sortKeys) entries = [...entries].sort(([a], [b]) => byCodePoint(a, b));
    return '{' + entries.map(([k, y]) => pyJsonString(String(k), ensureAscii) + key + dump(y)).join(item) + '}';
  };
  return dump(value);
}
