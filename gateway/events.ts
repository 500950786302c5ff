// 1.0 events, kept in the store: each is a row of agl1_events under the store rollout and attempt its 1.0
// rollout is. A `reward` event is also recorded as the reward annotation span of that attempt, so a training run
// reads it from the spans exactly as it reads a v0.3 runner's `emit_reward`.
import { rewardSpan } from '../store/reward-span';
import { rewardValueProblem } from '../common/reward-rule';
import { ValidationError } from '../store/errors';
import { addSpans } from '../store/span-ops';
import type { StoreDb } from '../store/store-db';
import type { JsonObject } from '../store/types';
import { supersededRoutes, toTriplets, withoutRoutedExperts } from './triplet';
import { DEFAULT_ATTEMPT_ID, type Event1 } from './types';
import type { Located } from './view';

interface EventRow {
  seq: number;
  attempt_id: string;
  event_type: string;
  timestamp: number;
  data: string;
}

function rewardValue(data: JsonObject): number {
  const v = data.value;
  const problem = rewardValueProblem(v);
  if (problem === null) return v as number;
  const msg = `a reward event's data.value: ${problem}`;
  throw new ValidationError(`Invalid request body: data.value: ${msg}`, [{ loc: ['body', 'data', 'value'], msg, type: 'finite_number' }]);
}

/**
 * Appends an event. Its reward span needs the store attempt: callers start a queuing rollout first; a rollout
 * that ended before it started (cancelled in the queue) keeps the event only. One transaction.
 */
export function recordEvent(s: StoreDb, loc: Located, attemptId: string, eventType: string, data: JsonObject): Event1 {
  const attempt = loc.attempt;
  const reward = eventType === 'reward' ? rewardValue(data) : null;
  return s.tx(() => {
    const now = s.now();
    if (eventType === 'model_request') dropSupersededRoutes(s, loc, attemptId, data);
    s.stmt(`INSERT INTO agl1_events (rollout_id, sequence, attempt_id, event_type, timestamp, data) VALUES (?, ?, ?, ?, ?, ?)`)
      .run(loc.row.rollout_id, loc.sequence, attemptId, eventType, now, JSON.stringify(data));
    // The span also counts as the attempt's heartbeat in the store (unresponsive_seconds).
    if (reward !== null && attempt) addSpans(s, [rewardSpan(loc.row.rollout_id, attempt.attempt_id, -1, reward, now)]);
    return { event_type: eventType, rollout_id: loc.v1Id, attempt_id: attemptId, timestamp: now, data };
  });
}

function dropSupersededRoutes(s: StoreDb, loc: Located, attemptId: string, data: JsonObject): void {
  if (data.routed_experts === undefined || data.routed_experts === null) return;
  const last = s.stmt(`SELECT seq, data FROM agl1_events WHERE rollout_id = ? AND sequence = ? AND attempt_id = ? AND event_type = 'model_request'
    ORDER BY seq DESC LIMIT 1`).get(loc.row.rollout_id, loc.sequence, attemptId) as { seq: number; data: string } | undefined;
  if (!last) return;
  const previous = JSON.parse(last.data) as JsonObject;
  if (supersededRoutes([{ index: last.seq, data: previous }], data) === null) return;
  delete previous.routed_experts;
  s.stmt('UPDATE agl1_events SET data = ? WHERE seq = ?').run(JSON.stringify(previous), last.seq);
}

export interface EventQuery {
  eventType: string | null;
  triplet: boolean;
  includeRoutedExperts: boolean;
}

/** GET /api/rollouts/{id}/events: the events of the rollout's `last_attempt_id` (default "0"), oldest first. */
export function queryEvents(s: StoreDb, loc: Located, q: EventQuery): Event1[] {
  const attemptId = loc.tracked?.last_attempt_id ?? DEFAULT_ATTEMPT_ID;
  const rows = s.stmt(`SELECT seq, attempt_id, event_type, timestamp, data FROM agl1_events
    WHERE rollout_id = ? AND sequence = ? AND attempt_id = ? ORDER BY seq`).all(loc.row.rollout_id, loc.sequence, attemptId) as EventRow[];
  let events: Event1[] = rows
    .filter((r) => q.eventType === null || r.event_type === q.eventType)
    .map((r) => ({ event_type: r.event_type, rollout_id: loc.v1Id, attempt_id: r.attempt_id, timestamp: r.timestamp, data: JSON.parse(r.data) as JsonObject }));
  if (q.triplet) events = toTriplets(events);
  if (!q.includeRoutedExperts) events = events.map(withoutRoutedExperts);
  return events;
}
