// Turns validation problems into lines a person can act on: one line per problem, each naming its field path.
import type { z } from 'zod';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`${source}: ${problems.length} problem${problems.length === 1 ? '' : 's'}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : out ? `.${String(part)}` : String(part);
  return out || '(top level)';
}

const snakeToCamel = (s: string) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** Edit distance with adjacent transpositions (optimal string alignment): "loraRnak" is 1 from "loraRank". */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

const normalized = (s: string) => s.toLowerCase().replace(/[_-]/g, '');

/**
 * The known name an unknown key most likely meant: the same but for case, "_" or "-" ("groupsize", "lora_rank"),
 * else the nearest within a typo or two ("loraRnak"); undefined when none is that close.
 */
export function closestName(key: string, known: readonly string[]): string | undefined {
  const k = normalized(key);
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = editDistance(k, normalized(name));
    if (!best || distance < best.distance) best = { name, distance };
  }
  if (!best) return undefined;
  const allowed = k.length <= 4 ? 0 : k.length <= 8 ? 1 : 2;
  return best.distance <= allowed ? best.name : undefined;
}

/**
 * One line per issue; unknown keys get their own line each, with the name they most likely meant: among
 * `knownKeysAt(path)` when given, else their camelCase when a snake_case name was used.
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], knownKeysAt?: (path: readonly PropertyKey[]) => readonly string[]): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const camel = snakeToCamel(key);
        const meant = knownKeysAt ? closestName(key, knownKeysAt(issue.path)) : camel !== key ? camel : undefined;
        const hint = meant !== undefined ? ` (did you mean "${meant}"?)` : '';
        lines.push(`${formatPath([...issue.path, key])}: unknown key${hint}`);
      }
    } else {
      lines.push(`${formatPath(issue.path)}: ${plainMessage(issue)}`);
    }
  }
  return lines;
}

/** Parse options that keep each issue's input, so a message can say what was given (`not the text "0.1"`). */
export const WITH_INPUT = { reportInput: true } as const;

/** zod's own wording ("Invalid input: expected number, received undefined", "Too small: ..."): never shown as is. */
const ZOD_WORDING = /^(Invalid|Too (small|big)|Unrecognized key|Expected|Required)\b/;

/**
 * An issue's message in plain words, on one line: the schema's own message where it gives one, otherwise what the
 * field must be and what it got ("must be a whole number, not 0.5", "is required (a number)", "must be one of
 * "ppo", "cispo", not the text "pp""). The field's path is the caller's to add.
 */
export function plainMessage(issue: z.core.$ZodIssue): string {
  if (!ZOD_WORDING.test(issue.message)) {
    const own = issue.message.replace(/\s*\n\s*/g, ' ');
    // A pattern's own description ("a tinker:// path") says what the value must be.
    return issue.code === 'invalid_format' && !/^(-|must\b)/.test(own) ? `must be ${own}` : own;
  }
  const i = issue as z.core.$ZodIssue & { input?: unknown; origin?: string; inclusive?: boolean; minimum?: number | bigint; maximum?: number | bigint };
  const given = 'input' in i ? `, not ${describeValue(i.input)}` : '';
  switch (i.code) {
    case 'invalid_type':
      if ('input' in i && i.input === undefined) return `is required (${nounOf(i.expected)})`;
      return `must be ${nounOf(i.expected)}${given}`;
    case 'too_small':
    case 'too_big': {
      const small = i.code === 'too_small';
      const n = Number(small ? i.minimum : i.maximum);
      const inclusive = i.inclusive !== false;
      if (i.origin === 'string') return small && n === 1 ? 'must not be empty' : `must be ${small ? 'at least' : 'at most'} ${n} characters long`;
      if (i.origin === 'array' || i.origin === 'set') return small && n === 1 ? 'must not be an empty list' : `must have ${small ? 'at least' : 'at most'} ${n} items`;
      return `must be ${small ? (inclusive ? 'at least' : 'above') : inclusive ? 'at most' : 'below'} ${n}${given}`;
    }
    case 'invalid_value':
      return `must be ${i.values.length === 1 ? JSON.stringify(i.values[0]) : `one of ${i.values.map((v) => JSON.stringify(v)).join(', ')}`}${given}`;
    case 'invalid_format':
      if (i.format === 'url') return `must be a URL such as http://127.0.0.1:4747${given}`;
      if (i.format === 'regex' && 'pattern' in i) return `must match ${String(i.pattern)}${given}`;
      return `must be a valid ${i.format}${given}`;
    case 'not_multiple_of':
      return `must be a multiple of ${String(i.divisor)}${given}`;
    case 'invalid_union': {
      // Each alternative's own first problem, as what it would take: "must be a whole number or "all"".
      const options = i.errors.map((branch) => (branch[0] ? plainMessage(branch[0]).replace(/^must (be|have) /, '').replace(/, not .*$/, '') : 'something else'));
      return `must be ${[...new Set(options)].join(' or ')}${given}`;
    }
    case 'invalid_key':
    case 'invalid_element':
      return `has a ${i.code === 'invalid_key' ? 'key' : 'value'} that ${i.issues[0] ? plainMessage(i.issues[0]) : 'is not valid'}`;
    case 'unrecognized_keys':
      return `unknown key${i.keys.length === 1 ? '' : 's'} ${i.keys.map((k) => JSON.stringify(k)).join(', ')}`;
    default:
      return 'is not valid';
  }
}

function nounOf(expected: string): string {
  const nouns: Record<string, string> = {
    int: 'a whole number',
    number: 'a number',
    string: 'a string',
    boolean: 'true or false',
    object: 'an object ({...})',
    array: 'a list ([...])',
    record: 'an object ({...})',
    null: 'null',
    bigint: 'a whole number',
    date: 'a date',
  };
  return nouns[expected] ?? expected;
}

function describeValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (typeof v === 'string') return `the text ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v)}`;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v)) return 'a list';
  return typeof v === 'object' ? 'an object' : typeof v;
}
