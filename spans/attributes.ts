// Span attributes: the values a span carries, and reading flattened OpenTelemetry attributes the way
// Agent-lightning does (agentlightning/utils/otel.py and the helpers at the top of adapter/triplet.py).

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** A span attribute's value, as the Python `Span` model takes it. */
export type AttributeValue = string | number | boolean | string[] | number[] | boolean[];
type Attributes = Record<string, unknown>;

/** Own-property write that also works for keys like "__proto__". */
function setKey(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

const isPlainObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

/**
 * `{"a.b": 1, "a.c.0": 2, "a.c.1": 3}` -> `{a: {b: 1, c: [2, 3]}}`. A dict becomes a list only
 * when its keys are exactly "0".."n-1"; later keys overwrite earlier ones as in Python.
 */
export function unflattenAttributes(flat: Attributes): unknown {
  const root: Record<string, unknown> = {};
  for (const [flatKey, value] of Object.entries(flat)) {
    const parts = flatKey.split('.');
    let curr = root;
    for (const part of parts.slice(0, -1)) {
      if (!Object.prototype.hasOwnProperty.call(curr, part) || !isPlainObject(curr[part])) setKey(curr, part, {});
      curr = curr[part] as Record<string, unknown>;
    }
    setKey(curr, parts[parts.length - 1]!, value);
  }
  return toListsWhereNumbered(root);
}

function toListsWhereNumbered(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toListsWhereNumbered);
  if (!isPlainObject(node)) return node;
  for (const k of Object.keys(node)) setKey(node, k, toListsWhereNumbered(node[k]));
  const keys = Object.keys(node);
  if (keys.length > 0 && keys.every((k) => /^[0-9]+$/.test(k))) {
    const indices = keys.map(Number).sort((a, b) => a - b);
    if (indices.every((v, i) => v === i) && indices.every((i) => Object.prototype.hasOwnProperty.call(node, String(i)))) {
      return indices.map((i) => node[String(i)]);
    }
  }
  return node;
}

/**
 * The attributes under `prefix.` with the prefix removed, unflattened. (Python raises when a key
 * equals the prefix itself; such a key is ignored here.)
 */
export function filterAndUnflatten(attributes: Attributes, prefix: string): unknown {
  const stripped: Attributes = {};
  for (const [k, v] of Object.entries(attributes)) {
    if (k.startsWith(prefix + '.')) setKey(stripped, k.slice(prefix.length + 1), v);
  }
  return unflattenAttributes(stripped);
}

/** Python truthiness of the unflatten result: a non-empty dict or list. */
function isNonEmpty(x: unknown): boolean {
  if (Array.isArray(x)) return x.length > 0;
  if (isPlainObject(x)) return Object.keys(x).length > 0;
  return Boolean(x);
}

/** The first prefix that yields something non-empty, unflattened; else null. */
export function firstUnflattened(attributes: Attributes, prefixes: readonly string[]): unknown {
  for (const p of prefixes) {
    const result = filterAndUnflatten(attributes, p);
    if (isNonEmpty(result)) return result;
  }
  return null;
}

/** The first present key whose value is a string (present non-strings are passed over). */
export function firstString(attributes: Attributes, keys: readonly string[]): string | null {
  for (const k of keys) {
    if (k in attributes && typeof attributes[k] === 'string') return attributes[k] as string;
  }
  return null;
}

/** Python's isinstance(x, int): integers, and booleans (a bool is an int there). */
export function isPyInt(x: unknown): boolean {
  return (typeof x === 'number' && Number.isInteger(x)) || typeof x === 'boolean';
}

export function asIntList(x: unknown): number[] | null {
  if (!Array.isArray(x) || !x.every(isPyInt)) return null;
  return x.map((v) => Number(v));
}

/** The first present key holding a list of ints (present values of another shape are passed over). */
export function firstIntList(attributes: Attributes, keys: readonly string[]): number[] | null {
  for (const k of keys) {
    if (k in attributes) {
      const list = asIntList(attributes[k]);
      if (list !== null) return list;
    }
  }
  return null;
}
