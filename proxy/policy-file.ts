// The served policy on disk (<data dir>/policy.json), so a restarted proxy resumes the policy the run last
// published instead of falling back to --model's base model.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parsePolicySpec } from './policy-spec';
import type { PolicySpec } from './policy-spec';

export function savePolicy(file: string, spec: PolicySpec): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(spec, null, 2) + '\n');
  renameSync(tmp, file);
}

/** The saved policy, or null when there is none (or it no longer validates). */
export function loadPolicy(file: string): PolicySpec | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  try {
    return parsePolicySpec(JSON.parse(text));
  } catch {
    return null;
  }
}
