// Python's notion of whitespace and word characters for regexes ported from the cookbook: Python's `\s`
// (str.isspace) has \x1c-\x1f and \x85 where JavaScript's has \ufeff, and Python's `\w` is letters, digits
// and underscore in any script.

/** The characters of Python's `\s`, for use inside a character class of a `u` regex. */
export const PY_SPACE = '\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';

/** The characters of Python's `\w`, for use inside a character class of a `u` regex. */
export const PY_WORD = '\\p{L}\\p{N}_';

const STRIP = new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, 'gu');

/** Python `str.strip()`. */
export function pyStrip(s: string): string {
  return s.replace(STRIP, '');
}

/** Python `not s.strip()`. */
export function pyIsBlank(s: string): boolean {
  return pyStrip(s) === '';
}

/** Python `repr(str)` (printable ASCII and letters as is; control characters escaped). */
export function pyRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += '\\' + quote;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || (c >= 0x7f && c <= 0xa0) || c === 0xad) out += '\\x' + c.toString(16).padStart(2, '0');
    else out += ch;
  }
  return out + quote;
}
