// Python's repr() and str() of the values here, as the cookbook's templates print them (`{value!r}`, `{value!s}`,
// Jinja's `|string`): None, True, 1.0, 1e-05, nan, 'it''s' quoted as Python quotes it, lists and dicts as repr.

import { pyFloatRepr } from './float-text';
import { floatOf, intText, pyItems, type PyDict, type PyValue } from './values';

// The characters str.isprintable() refuses (other than the space): repr writes them as \xhh, \uhhhh or \Uhhhhhhhh.
const UNPRINTABLE = /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]$/u;

function escaped(c: number): string {
  if (c < 0x100) return '\\x' + c.toString(16).padStart(2, '0');
  if (c < 0x10000) return '\\u' + c.toString(16).padStart(4, '0');
  return '\\U' + c.toString(16).padStart(8, '0');
}

/** Python `repr(str)`: single quotes unless the text has ' and no ", non-printable characters escaped. */
export function pyReprString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    if (ch === quote || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch !== ' ' && UNPRINTABLE.test(ch)) out += escaped(ch.codePointAt(0)!);
    else out += ch;
  }
  return out + quote;
}

/** Python `repr(value)`. */
export function pyRepr(v: PyValue): string {
  if (v === null || v === undefined) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'string') return pyReprString(v);
  const f = floatOf(v);
  if (f !== null) return pyFloatRepr(f);
  if (typeof v === 'number') return intText(v);
  if (Array.isArray(v)) return '[' + v.map(pyRepr).join(', ') + ']';
  return '{' + pyItems(v as PyDict).map(([k, x]) => pyReprString(k) + ': ' + pyRepr(x)).join(', ') + '}';
}

/** Python `str(value)`: a string as it is, anything else as repr writes it. */
export function pyStr(v: PyValue): string {
  return typeof v === 'string' ? v : pyRepr(v);
}
