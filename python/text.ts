// Python's notion of whitespace and word characters, for code ported from the cookbook: Python's `\s` and
// str.isspace() take \x1c-\x1f and \x85 where JavaScript's `\s` takes \ufeff instead, and Python's `\w` is letters,
// digits and underscore in any script. str.strip() and friends with no argument strip exactly that whitespace.

/** The characters of Python's `\s`, for use inside a character class of a `u` regex. */
export const PY_SPACE = '\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';

/** The characters of Python's `\w`, for use inside a character class of a `u` regex. */
export const PY_WORD = '\\p{L}\\p{N}_';

const LEAD = new RegExp(`^[${PY_SPACE}]+`, 'u');
const TRAIL = new RegExp(`[${PY_SPACE}]+$`, 'u');
const ONE_SPACE = new RegExp(`^[${PY_SPACE}]$`, 'u');

/** Python `str.strip()`. */
export const pyStrip = (s: string): string => s.replace(LEAD, '').replace(TRAIL, '');
/** Python `str.lstrip()`. */
export const pyLstrip = (s: string): string => s.replace(LEAD, '');
/** Python `str.rstrip()`. */
export const pyRstrip = (s: string): string => s.replace(TRAIL, '');
/** Python `ch.isspace()` for one character. */
export const isPySpace = (ch: string): boolean => ONE_SPACE.test(ch);
/** Python `not s.strip()`. */
export const pyIsBlank = (s: string): boolean => pyStrip(s) === '';
