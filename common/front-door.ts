// What every service's front door does with what it reads, before anything reaches SQLite or another service:
// ids that can be addressed in a URL path, integers a database can bind, error messages that quote at most a
// short prefix of the input and name no file of this machine, and the route tables the fuzz test reads.

/** Longest id a service takes in a path or header (the store's own ids are 11-15 characters). */
export const MAX_ID_CHARS = 256;

/** Characters of an input an error message quotes back, at most. */
export const QUOTE_CHARS = 80;

/** A value as an error message quotes it: JSON, cut to `max` characters with the length it had. */
export function quote(value: unknown, max = QUOTE_CHARS): string {
  if (typeof value === 'string') {
    return value.length <= max ? JSON.stringify(value) : `${JSON.stringify(value.slice(0, max))}… (${value.length} characters)`;
  }
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;
}

/** Text from a request as a message quotes it without JSON quotes (Python-parity messages): at most `max` characters. */
export function clip(text: unknown, max = QUOTE_CHARS): string {
  const t = String(text);
  return t.length <= max ? t : `${t.slice(0, max)}… (${t.length} characters)`;
}

/**
 * Why `id` cannot be a rollout, attempt, model, worker or resources id that a URL path addresses, or null when it
 * can: empty, too long, `.` or `..` (a URL resolver removes them: the request would reach another route), a path
 * separator, or a control character.
 */
export function idProblem(id: string): string | null {
  if (id.length === 0) return 'must not be empty';
  if (id.length > MAX_ID_CHARS) return `must be at most ${MAX_ID_CHARS} characters (it has ${id.length})`;
  if (id === '.' || id === '..') return `must not be ${JSON.stringify(id)}`;
  if (/[/\\]/.test(id)) return "must not contain '/' or '\\'";
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(id)) return 'must not contain control characters';
  return null;
}

/** SQLite binds integers as 64-bit; JavaScript numbers are exact to 2^53. A query integer is kept within both. */
export const MAX_QUERY_INT = Number.MAX_SAFE_INTEGER;

/**
 * An error message for a client: one line, no absolute path of this machine (`roots` are replaced by what they
 * are, e.g. the data directory by "<data>"), at most `max` characters.
 */
export function clientMessage(message: string, roots: Record<string, string> = {}, max = 1000): string {
  let text = message.replace(/\s*\n\s*/g, ' ').trim();
  for (const [root, name] of Object.entries(roots)) if (root) text = text.split(root).join(name);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** One route as a service's table declares it: what the route fuzz test (test/fuzz/routes.test.ts) sends to. */
export interface RouteDoc {
  method: string;
  /** The path with `{name}` for one path segment and `{name*}` for the rest of the path. */
  path: string;
  /** Query parameters the route reads, by kind. */
  query?: Record<string, 'int' | 'bool' | 'string' | 'list'>;
  /** Body field names it reads (at any depth), when known: the fuzz builds bodies from them. */
  fields?: string[];
  /** A small body the route accepts, when it takes one: the fuzz sends it with hostile paths and one field changed. */
  example?: Record<string, unknown>;
}

/** A path template (`/rollouts/{rollout_id}`, `/openai/v1/{rest*}`) as an anchored regex and its parameter names. */
export function compilePath(template: string, prefix = ''): { pattern: RegExp; keys: string[]; rest: string | null } {
  const keys: string[] = [];
  let restKey: string | null = null;
  const escaped = (prefix + template).replace(/[.+?^$()|[\]\\]/g, '\\$&');
  const source = escaped.replace(/\{(\w+)(\*)?\}/g, (_m, k: string, rest?: string) => {
    keys.push(k);
    if (rest) restKey = k;
    return rest ? '(.+)' : '([^/]+)';
  });
  return { pattern: new RegExp(`^${source}$`), keys, rest: restKey };
}

/** Every object key of a zod schema, at any depth (optional, nullable, default, array, union and pipe unwrapped). */
export function schemaFields(schema: unknown, out = new Set<string>(), seen = new Set<unknown>()): string[] {
  const def = (schema as { _zod?: { def?: Record<string, unknown> } } | null)?._zod?.def;
  if (!def || seen.has(schema)) return [...out];
  seen.add(schema);
  const visit = (s: unknown) => schemaFields(s, out, seen);
  if (def.type === 'object' && def.shape && typeof def.shape === 'object') {
    for (const [k, v] of Object.entries(def.shape as Record<string, unknown>)) {
      out.add(k);
      visit(v);
    }
  }
  for (const key of ['innerType', 'element', 'valueType', 'in', 'out', 'left', 'right']) if (def[key]) visit(def[key]);
  if (Array.isArray(def.options)) def.options.forEach(visit);
  return [...out];
}
