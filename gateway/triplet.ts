// The triplet view of 1.0 events (pure), as agentlightning 1.0.2's `server/routes/events.py` computes it:
// model_request events trimmed to token ids and logprobs, reward events to their value, then model_requests
// deduplicated by prompt token ids (the last kept). Also upstream's rule that only the last model_request of a
// trajectory keeps its routed experts.
import type { JsonObject } from '../store/types';
import type { Event1 } from './types';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Per-token logprobs of a choice (chat `logprobs.content[].logprob` or completions `token_logprobs`); null if unusable. */
function choiceLogprobs(choice: Obj): number[] | null {
  const lp = choice.logprobs;
  if (!isObj(lp)) return null;
  let raw: unknown[];
  if (Array.isArray(lp.content)) {
    raw = [];
    for (const item of lp.content) {
      if (!isObj(item) || !('logprob' in item)) return null;
      raw.push(item.logprob);
    }
  } else if (Array.isArray(lp.token_logprobs)) raw = lp.token_logprobs;
  else return null;
  const out: number[] = [];
  for (const v of raw) {
    // Python's float(): numbers, numeric strings and booleans.
    const f = typeof v === 'number' ? v : typeof v === 'boolean' ? Number(v) : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
    if (!Number.isFinite(f)) return null;
    out.push(f);
  }
  return out;
}

export function trimModelRequest(data: Obj): JsonObject {
  const resp = data.response;
  let prompt: unknown[] = [];
  let response: unknown[] = [];
  let logprobs: number[] | null = null;
  if (isObj(resp)) {
    prompt = list(resp.prompt_token_ids);
    const choices = list(resp.choices);
    const first = isObj(choices[0]) ? choices[0] : null;
    if (first) {
      if (prompt.length === 0) prompt = list(first.prompt_token_ids);
      response = list(first.token_ids);
      logprobs = choiceLogprobs(first);
    }
  } else if (Array.isArray(resp)) {
    // Legacy: raw stream chunks.
    for (const chunk of resp.filter(isObj)) {
      if (prompt.length === 0 && list(chunk.prompt_token_ids).length) prompt = list(chunk.prompt_token_ids);
      const c = list(chunk.choices)[0];
      if (isObj(c) && list(c.token_ids).length) response = response.concat(list(c.token_ids));
    }
  }
  const server = isObj(data.server) ? data.server : {};
  const out: Obj = {
    prompt_token_ids: prompt,
    response_token_ids: response,
    response_log_probs: logprobs,
    server: { model: server.model ?? null, version: server.version ?? null },
  };
  if (data.routed_experts !== undefined && data.routed_experts !== null) out.routed_experts = data.routed_experts;
  for (const key of ['http_status', 'status']) if (key in data) out[key] = data[key];
  if (isObj(resp) && 'error' in resp) out.error = resp.error;
  return out as JsonObject;
}

function trimReward(data: Obj): JsonObject {
  const out: Obj = { value: data.value ?? null };
  for (const key of ['source', 'reason']) if (key in data) out[key] = data[key];
  return out as JsonObject;
}

const validIds = (v: unknown): v is number[] => Array.isArray(v) && v.length > 0 && v.every((t) => Number.isInteger(t));

/** `format=triplet`: trimmed events, model_requests deduplicated by prompt token ids (keeping the last). */
export function toTriplets(events: Event1[]): Event1[] {
  const trimmed = events.map((e) => {
    if (e.event_type === 'model_request') return { ...e, data: trimModelRequest(e.data) };
    if (e.event_type === 'reward') return { ...e, data: trimReward(e.data) };
    return e;
  });
  const lastByPrompt = new Map<string, number>();
  const kept = new Set<number>();
  trimmed.forEach((e, i) => {
    if (e.event_type !== 'model_request') return;
    const ids = e.data.prompt_token_ids;
    if (!validIds(ids)) kept.add(i); // no key: kept, not deduplicated
    else lastByPrompt.set(ids.join(','), i);
  });
  for (const i of lastByPrompt.values()) kept.add(i);
  return trimmed.filter((e, i) => e.event_type !== 'model_request' || kept.has(i));
}

export function withoutRoutedExperts(e: Event1): Event1 {
  if (e.event_type !== 'model_request' || !('routed_experts' in e.data)) return e;
  const { routed_experts: _dropped, ...data } = e.data;
  return { ...e, data };
}

/**
 * Before a model_request with routed experts is stored: the index of the previous model_request (of the same
 * attempt) whose routed experts it supersedes, if it has the same prompt or extends that one's context.
 */
export function supersededRoutes(previous: { index: number; data: Obj }[], data: Obj): number | null {
  if (data.routed_experts === undefined || data.routed_experts === null) return null;
  const current = trimModelRequest(data);
  const prompt = current.prompt_token_ids as unknown[];
  const last = previous.at(-1);
  if (!last) return null;
  const before = trimModelRequest(last.data);
  const context = [...(before.prompt_token_ids as unknown[]), ...(before.response_token_ids as unknown[])];
  const same = JSON.stringify(prompt) === JSON.stringify(before.prompt_token_ids);
  const extends_ = JSON.stringify(prompt.slice(0, context.length)) === JSON.stringify(context);
  return (same || extends_) && 'routed_experts' in last.data ? last.index : null;
}
