// JSON as Rust's serde_json writes it (tml-renderers re-serialises tool schemas and tool-call arguments with it):
// compact, non-ASCII characters as they are, only `"` `\` and control characters escaped; integers that fit 64 bits
// as written; every other number as an f64 in the `ryu` crate's shortest form (1.0, 1e16, 1.5e-7, 0.00001).
import { PyFloat, type PyJson } from '../python';

/** ryu's formatting of an f64: shortest round-trip digits, fixed notation for 1e-5 <= |x| < 1e16. */
export function ryuFormat(x: number): string {
  if (!Number.isFinite(x)) throw new RangeError(`serde_json cannot write ${x}`);
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  const [mant, expPart] = Math.abs(x).toExponential().split('e');
  const digits = mant!.replace('.', '');
  const n = digits.length;
  const kk = Number(expPart) + 1; // the decimal point sits kk digits from the left of `digits`
  let body: string;
  if (n <= kk && kk <= 16) body = digits + '0'.repeat(kk - n) + '.0';
  else if (0 < kk && kk <= 16) body = digits.slice(0, kk) + '.' + digits.slice(kk);
  else if (-5 < kk && kk <= 0) body = '0.' + '0'.repeat(-kk) + digits;
  else body = (n === 1 ? digits : digits[0] + '.' + digits.slice(1)) + 'e' + String(kk - 1);
  return sign + body;
}

const U64_MAX = (1n << 64n) - 1n;
const I64_MIN = -(1n << 63n);

/** Rust's `str::cmp`: byte order of the UTF-8 encodings (BTreeMap key order). */
export function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** `value` as serde_json::to_string writes it; `sortKeys` orders every object's keys as a BTreeMap does. */
export function serdeJson(value: PyJson, sortKeys = false): string {
  const dump = (v: PyJson): string => {
    if (v === null) return 'null';
    if (typeof v === 'boolean') return v ? 'true' : 'false';
    if (typeof v === 'number') return String(v);
    if (typeof v === 'bigint') return v >= I64_MIN && v <= U64_MAX ? v.toString() : ryuFormat(Number(v));
    if (v instanceof PyFloat) return ryuFormat(v.value);
    if (typeof v === 'string') return JSON.stringify(v);
    if (Array.isArray(v)) return '[' + v.map(dump).join(',') + ']';
    const entries = [...v.entries()];
    if (sortKeys) entries.sort(([a], [b]) => byteOrder(a, b));
    return '{' + entries.map(([k, x]) => JSON.stringify(k) + ':' + dump(x)).join(',') + '}';
  };
  return dump(value);
}
