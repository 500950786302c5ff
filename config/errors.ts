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

/** One line per issue; unknown keys get their own line each, with a hint when a snake_case name was used. */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const camel = snakeToCamel(key);
        const hint = camel !== key ? ` (did you mean "${camel}"?)` : '';
        lines.push(`${formatPath([...issue.path, key])}: unknown key${hint}`);
      }
    } else {
      lines.push(`${formatPath(issue.path)}: ${issue.message}`);
    }
  }
  return lines;
}
