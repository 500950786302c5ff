// Model endpoints (`/api/models`) and the pause flag of the gateway's proxy (`/proxy/pause`), kept in the store's
// database so a restart keeps both. The count of calls in flight is the one thing held in memory.
import { createHash } from 'node:crypto';
import type { StoreDb } from '../store/store-db';
import type { Model1, PauseState } from './types';

/** Upsert by (model, endpoint), as upstream. */
export function registerModels(s: StoreDb, models: Model1[]): Model1[] {
  return s.tx(() => {
    const upsert = s.stmt(`INSERT INTO agl1_models (model, endpoint, version) VALUES (?, ?, ?)
      ON CONFLICT (model, endpoint) DO UPDATE SET version = excluded.version`);
    for (const m of models) upsert.run(m.model, m.endpoint, m.version);
    return models;
  });
}

export function deleteModels(s: StoreDb): void {
  s.tx(() => s.stmt('DELETE FROM agl1_models').run());
}

/**
 * The endpoint a rollout's calls go to among those registered for `model`: the pool sorted by URL, the first 8
 * bytes of sha256(rollout id) modulo its size (upstream pins each rollout to one endpoint for prefix-cache reuse).
 */
export function pickModel(s: StoreDb, model: string, rolloutId: string): Model1 | null {
  const pool = s.stmt('SELECT model, endpoint, version FROM agl1_models WHERE model = ? ORDER BY endpoint').all(model) as Model1[];
  if (pool.length === 0) return null;
  const digest = createHash('sha256').update(rolloutId, 'utf8').digest();
  return pool[Number(digest.readBigUInt64BE(0) % BigInt(pool.length))]!;
}

type Pause = Omit<PauseState, 'inflight'>;

export function readPause(s: StoreDb): Pause {
  const row = s.stmt('SELECT paused, retry_after_seconds, reason FROM agl1_pause WHERE id = 1').get() as
    { paused: number; retry_after_seconds: number; reason: string | null } | undefined;
  return row ? { paused: row.paused === 1, retry_after_seconds: row.retry_after_seconds, reason: row.reason } : { paused: false, retry_after_seconds: 5, reason: null };
}

/** Pause (with how long agents should wait and why) or resume (keeping the last Retry-After, as upstream). */
export function writePause(s: StoreDb, paused: boolean, retryAfterSeconds?: number, reason?: string | null): Pause {
  return s.tx(() => {
    const now = readPause(s);
    const next: Pause = paused
      ? { paused: true, retry_after_seconds: retryAfterSeconds ?? 5, reason: reason ?? null }
      : { paused: false, retry_after_seconds: now.retry_after_seconds, reason: null };
    s.stmt(`INSERT INTO agl1_pause (id, paused, retry_after_seconds, reason) VALUES (1, ?, ?, ?)
      ON CONFLICT (id) DO UPDATE SET paused = excluded.paused, retry_after_seconds = excluded.retry_after_seconds, reason = excluded.reason`)
      .run(next.paused ? 1 : 0, next.retry_after_seconds, next.reason);
    return next;
  });
}
