// Checks of request fields every API shares (pure). Integers and floats are both accepted where a number is
// expected (JSON has one number type); integer fields reject fractions. Errors are ApiError(400) naming the
// parameter; each API prints them in its own error format.
import { quote } from '../../common/front-door';
import { badRequest } from '../errors';

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function present(body: Obj, key: string): boolean {
  return body[key] !== undefined && body[key] !== null;
}

export function requireObject(body: unknown): Obj {
  if (!isObj(body)) throw badRequest('the request body must be a JSON object', null, 'invalid_type');
  return body;
}

export function num(body: Obj, key: string, min: number, max: number, opts: { minExclusive?: boolean } = {}): number | undefined {
  if (!present(body, key)) return undefined;
  const v = body[key];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw badRequest(`${key} must be a number, got ${quote(v)}`, key, 'invalid_type');
  if (v > max || (opts.minExclusive ? v <= min : v < min)) {
    throw badRequest(`${key} must be ${opts.minExclusive ? 'greater than' : 'at least'} ${min} and at most ${max}, got ${v}`, key);
  }
  return v;
}

export function int(body: Obj, key: string, min: number, max: number): number | undefined {
  const v = num(body, key, min, max);
  if (v !== undefined && !Number.isInteger(v)) throw badRequest(`${key} must be an integer, got ${v}`, key, 'invalid_type');
  return v;
}

export function str(body: Obj, key: string): string | undefined {
  if (!present(body, key)) return undefined;
  if (typeof body[key] !== 'string') throw badRequest(`${key} must be a string`, key, 'invalid_type');
  return body[key] as string;
}

export function bool(body: Obj, key: string): boolean | undefined {
  if (!present(body, key)) return undefined;
  if (typeof body[key] !== 'boolean') throw badRequest(`${key} must be a boolean`, key, 'invalid_type');
  return body[key] as boolean;
}

/** Stop strings: a string or at most `max` non-empty strings. */
export function stopStrings(v: unknown, key: string, max = 16): string[] {
  if (v === undefined || v === null) return [];
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list) || list.length > max || !list.every((s) => typeof s === 'string' && s.length > 0)) {
    throw badRequest(`${key} must be a non-empty string or an array of at most ${max} non-empty strings`, key);
  }
  return list as string[];
}

/** Refuses any field the API does not define here: a feature it cannot honour is never silently ignored. */
export function onlyKnown(body: Obj, known: readonly string[], api: string): void {
  for (const key of Object.keys(body)) {
    if (!known.includes(key)) throw badRequest(`${key}: not a ${api} parameter this proxy serves (it serves: ${known.join(', ')})`, key, 'unknown_parameter');
  }
}

/** Refuses a field set to anything but its "off" values: a feature this proxy cannot honour. */
export function refuseUnless(body: Obj, key: string, ok: (v: unknown) => boolean, why: string): void {
  if (present(body, key) && !ok(body[key])) throw badRequest(`${key}: ${why}`, key, 'unsupported_parameter');
}

/** Unset sampling fields are left out, so they take the policy's defaults. */
export function definedOnly<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}

/** Tool-call arguments: a JSON string encoding an object (as chat tool calls and Responses function calls carry them). */
export function argumentsJson(args: unknown, label: string, param = label): string {
  if (typeof args !== 'string') throw badRequest(`${label} must be a JSON string`, param, 'invalid_type');
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    throw badRequest(`${label} is not valid JSON`, param);
  }
  if (!isObj(parsed)) throw badRequest(`${label} must encode a JSON object`, param);
  return args;
}

/** tool_choice values no renderer can enforce (it can only show the tools): refused, never ignored. */
export function unenforceableToolChoice(key: string, what: string): never {
  throw badRequest(
    `${key}: ${what} cannot be enforced: the proxy shows the tools to the model through its renderer and cannot force a call; use "auto" (or "none")`,
    key,
    'unsupported_parameter',
  );
}
