// The shapes Python values take here, and dict access that works on either kind of mapping. A Python value is null
// (None), boolean, string, bigint (an int of any size), number (an int when integral, else a float), PyFloat (a
// float read from text, so 1.0 stays a float), an array (a list), a Map (a dict read from text, keys in the order
// written) or a plain object (a dict built in JavaScript).

/** A number Python holds as a float: it had a fraction or an exponent where it was read. */
export class PyFloat {
  constructor(readonly value: number) {}
}

/** Any value json.dumps, repr and str() take. */
export type PyValue = null | boolean | string | number | bigint | PyFloat | PyValue[] | Map<string, PyValue> | { [k: string]: PyValue };

/** What json.loads gives: dicts are Maps, floats PyFloat, ints a number where safe and a bigint beyond. */
export type PyJson = null | boolean | number | bigint | PyFloat | string | PyJson[] | Map<string, PyJson>;

export type PyDict = Map<string, PyValue> | { [k: string]: PyValue };

export function isPyDict(v: PyValue): v is PyDict {
  return v instanceof Map || (typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof PyFloat));
}

export function isPyList(v: PyValue): v is PyValue[] {
  return Array.isArray(v);
}

/** The (key, value) pairs of a dict in Python's order (a plain object's undefined fields are left out). */
export function pyItems(v: PyDict): [string, PyValue][] {
  return v instanceof Map ? [...v.entries()] : Object.entries(v).filter(([, x]) => x !== undefined);
}

export function pyGet(v: PyValue, key: string): PyValue | undefined {
  if (v instanceof Map) return v.get(key);
  if (isPyDict(v)) return (v as Record<string, PyValue>)[key];
  return undefined;
}

/** The float a value stands for, or null when it is a Python int or no number at all. */
export function floatOf(v: PyValue): number | null {
  if (v instanceof PyFloat) return v.value;
  if (typeof v === 'number') return Number.isInteger(v) ? null : v;
  return null;
}

/** An integral number as Python prints an int: every digit, never an exponent. */
export function intText(n: number): string {
  return BigInt(n).toString();
}
