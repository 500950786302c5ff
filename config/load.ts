// Reading and validating a run config file: every problem reported at once, each with its field path.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import { ConfigError, describeIssues, formatPath, WITH_INPUT } from './errors';
import { modelProblems } from './model-fit';
import { RunConfigSchema, type RunConfig } from './run-config';
import { withServiceDefaults } from './service-defaults';

/**
 * Unknown keys whose right name is not their camelCase (describeIssues hints only that): the cookbook's names for
 * settings this config spells differently, by field path.
 */
const RENAMED_KEYS: Record<string, string> = {
  async_config: 'async',
  asyncConfig: 'async',
  'async.loss_fn': 'lossFn (at the top level)',
  'async.lossFn': 'lossFn (at the top level)',
};

/** The keys an object of the schema takes at `at` (through defaults, nullables and pipes); [] when none is found. */
function keysAt(schema: z.ZodType, at: readonly PropertyKey[]): string[] {
  let s: unknown = schema;
  const unwrap = () => {
    for (;;) {
      const def = (s as { _zod?: { def?: { type: string; innerType?: unknown; in?: unknown } } })._zod?.def;
      if (def?.innerType) s = def.innerType;
      else if (def?.type === 'pipe' && def.in) s = def.in;
      else return def;
    }
  };
  for (const part of at) {
    const def = unwrap() as { type?: string; shape?: Record<string, unknown> } | undefined;
    if (def?.type !== 'object' || typeof part !== 'string' || !def.shape?.[part]) return [];
    s = def.shape[part];
  }
  const def = unwrap() as { type?: string; shape?: Record<string, unknown> } | undefined;
  return def?.type === 'object' && def.shape ? Object.keys(def.shape) : [];
}

function describe(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.flatMap((issue) => {
    if (issue.code !== 'unrecognized_keys') return describeIssues([issue]);
    return issue.keys.flatMap((key) => {
      const renamed = RENAMED_KEYS[formatPath([...issue.path, key])];
      if (renamed) return [`${formatPath([...issue.path, key])}: unknown key (did you mean "${renamed}"?)`];
      return describeIssues([{ ...issue, keys: [key] }], (at) => keysAt(RunConfigSchema, at));
    });
  });
}

/** Validates a parsed config object; `source` names it in errors. Relative file paths resolve against `baseDir`. */
export function validateRunConfig(raw: unknown, source = 'config', baseDir = process.cwd()): RunConfig {
  const parsed = RunConfigSchema.safeParse(raw, WITH_INPUT);
  if (!parsed.success) throw new ConfigError(source, describe(parsed.error.issues));
  const cfg = parsed.data;
  // As the seed: log_path is relative to the working directory (the client's, or the worker's for a CLI start).
  cfg.logPath = path.resolve(cfg.logPath);
  const problems: string[] = modelProblems(cfg);
  for (const key of ['trainFile', 'valFile'] as const) {
    const file = cfg.datasetBuilder[key];
    if (file === null) continue;
    const resolved = path.resolve(baseDir, file);
    if (!existsSync(resolved)) problems.push(`datasetBuilder.${key}: file not found: ${resolved}`);
    else if (!/\.(jsonl|csv)$/.test(resolved)) problems.push(`datasetBuilder.${key}: unsupported file type (use .jsonl or .csv): ${resolved}`);
    cfg.datasetBuilder[key] = resolved;
  }
  if (problems.length > 0) throw new ConfigError(source, problems);
  return cfg;
}

/** Reads a run config file; services it leaves out are found from the environment (config/service-defaults.ts). */
export function loadRunConfigFile(file: string): RunConfig {
  if (!existsSync(file)) throw new ConfigError(file, ['file not found']);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(file, [`not valid JSON: ${(err as Error).message}`]);
  }
  return validateRunConfig(withServiceDefaults(raw), file, path.dirname(path.resolve(file)));
}
