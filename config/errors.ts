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
      lines.push(`${formatPath(issue.path)}: ${issue.message}`);
    }
  }
  return lines;
}
