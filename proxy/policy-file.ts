// The served policy on disk (<data dir>/policy.json), so a restarted proxy resumes the policy the run last
// published instead of falling back to --model's base model.
import { mkdirSync, readFileSync, renameSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parsePolicySpec } from './policy-spec';
import type { PolicySpec } from './policy-spec';

export function savePolicy(file: string, spec: PolicySpec): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, JSON.stringify(spec, null, 2) + '\n');
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true }); // nothing half-written stays behind
    throw err;
  }
}

/**
 * The saved policy as the proxy keeps it: each switch is saved; a save that fails (a full disk) does not undo the
 * switch (calls are served from memory, and a rollout's policy comes from the store), but it is said: one log line
 * naming the file and the bytes free, and `disk_full` on the health route until a save succeeds again.
 */
export class PolicyFile {
  /** The last save's failure, when it failed. */
  failed: { since: number; detail: string; diskFull: boolean } | null = null;

  constructor(
    readonly file: string,
    private readonly log: (line: string) => void,
  ) {}

  save(spec: PolicySpec): void {
    try {
      savePolicy(this.file, spec);
      if (this.failed) this.log(`policy file ${this.file} saved again`);
      this.failed = null;
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      const diskFull = e.code === 'ENOSPC' || e.code === 'EDQUOT';
      const detail = diskFull
        ? `the proxy's disk is full: saving ${path.basename(this.file)} in its data directory failed (${e.code}; ${this.freeBytes()} bytes free); ` +
          'calls are served, but a restarted proxy would resume an older policy until space is freed'
        : `saving ${path.basename(this.file)} in the proxy's data directory failed (${e.code ?? e.message}); a restarted proxy would resume an older policy`;
      this.log(`${detail} [${this.file}]`);
      this.failed = { since: this.failed?.since ?? Date.now(), detail, diskFull };
    }
  }

  /** Health's part: disk_full (or save_failed) with the reason, else nothing. */
  health(): { status: 'disk_full' | 'save_failed'; detail: string; since: string } | null {
    if (!this.failed) return null;
    return { status: this.failed.diskFull ? 'disk_full' : 'save_failed', detail: this.failed.detail, since: new Date(this.failed.since).toISOString() };
  }

  private freeBytes(): number {
    try {
      const s = statfsSync(path.dirname(this.file));
      return Number(s.bavail) * Number(s.bsize);
    } catch {
      return Infinity;
    }
  }
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
