// A float as Python writes it, in its two spellings of the values that are not finite: repr() and str() write
// nan, inf and -inf; json.dumps writes NaN, Infinity and -Infinity. The digits of a finite float are the same in
// both: the shortest that round-trip, fixed from 1e-4 up to 1e16 and d.ddde+XX outside.

/** Python `repr(float)` (and `str(float)`): 1.0, 1e-05, 1e+16, nan, inf. */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  return finiteDigits(x);
}

/** A float as Python's `json.dumps` writes it: as repr does, but NaN, Infinity and -Infinity. */
export function pyJsonFloat(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  return finiteDigits(x);
}

function finiteDigits(x: number): string {
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
