// LlmProxyTraceToTriplet (adapter/triplet.py, §6.4): triplets from the LLM proxy's own spans,
// ordered by sequence id only (proxy and agent clocks may disagree). Experimental upstream.
//
// One addition: Python's version never reads logprobs, so the seed cannot train from proxy spans.
// A `litellm_request` span that carries `logprobs.content` as a JSON string (what our proxy writes,
// and what TracerTraceToTriplet reads) gives its triplet `response.logprobs`. LiteLLM's own spans
// carry no such attribute, so on Python traces the output is unchanged.
import { asIntList } from '../../spans/attributes';
import { literalEvalMaybe } from '../../python/literal';
import { getRewardValue } from '../../spans/rewards';
import type { StoreSpan, Triplet } from './types';

interface LlmItem {
  span: StoreSpan;
  seq: number;
  promptIds: number[];
  responseIds: number[];
  requestId: string | null;
  logprobs: unknown;
}

/** `raw_gen_ai_request`: LiteLLM's str() of the raw vLLM-style request and response fields. */
function tokensFromRawRequest(attrs: Record<string, unknown>): [number[], number[]] {
  const prompt = asIntList(literalEvalMaybe(attrs['llm.hosted_vllm.prompt_token_ids'])) ?? [];
  let response: number[] = [];
  const nested = literalEvalMaybe(attrs['llm.hosted_vllm.response_token_ids']);
  if (Array.isArray(nested) && nested.length > 0 && Array.isArray(nested[0])) response = asIntList(nested[0]) ?? [];
  if (response.length === 0) {
    const choices = literalEvalMaybe(attrs['llm.hosted_vllm.choices']);
    if (Array.isArray(choices) && choices.length > 0 && choices[0] && typeof choices[0] === 'object' && !Array.isArray(choices[0])) {
      response = asIntList((choices[0] as Record<string, unknown>).token_ids) ?? [];
    }
  }
  return [prompt, response];
}

/** `litellm_request`: token ids put there by in-process LiteLLM instrumentation, when present. */
function tokensFromLitellmRequest(attrs: Record<string, unknown>): [number[], number[]] {
  const prompt = asIntList(literalEvalMaybe(attrs['prompt_token_ids'] || [])) ?? [];
  const response = asIntList(literalEvalMaybe(attrs['response_token_ids'] || [])) ?? [];
  return [prompt, response];
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function requestId(attrs: Record<string, unknown>): string | null {
  const rid = attrs['gen_ai.response.id'] || attrs['llm.hosted_vllm.id'];
  return typeof rid === 'string' && rid !== '' ? rid : null;
}

export function llmProxyTraceToTriplet(source: readonly StoreSpan[]): Triplet[] {
  const spans = [...source].sort((a, b) => a.sequence_id - b.sequence_id || (a.start_time ?? 0) - (b.start_time ?? 0));

  const items: LlmItem[] = [];
  const seen = new Set<string>();
  for (const span of spans) {
    const attrs = (span.attributes ?? {}) as Record<string, unknown>;
    let [promptIds, responseIds]: [number[], number[]] = [[], []];
    if (span.name === 'raw_gen_ai_request') [promptIds, responseIds] = tokensFromRawRequest(attrs);
    else if (span.name === 'litellm_request') [promptIds, responseIds] = tokensFromLitellmRequest(attrs);
    if (promptIds.length === 0 || responseIds.length === 0) continue;
    const rid = requestId(attrs);
    if (rid !== null) {
      if (seen.has(rid)) continue; // the same request seen through another span
      seen.add(rid);
    }
    const logprobs = span.name === 'litellm_request' && typeof attrs['logprobs.content'] === 'string' ? parseJson(attrs['logprobs.content']) : undefined;
    items.push({ span, seq: span.sequence_id, promptIds, responseIds, requestId: rid, logprobs });
  }
  items.sort((a, b) => a.seq - b.seq);

  const rewards: { seq: number; value: number }[] = [];
  for (const span of spans) {
    const value = getRewardValue(span);
    if (value !== null) rewards.push({ seq: span.sequence_id, value });
  }
  rewards.sort((a, b) => a.seq - b.seq);

  // Each reward goes to the latest call with a smaller sequence id that has none yet.
  const assigned = new Map<string, number>();
  for (const { seq, value } of rewards) {
    for (let i = items.length - 1; i >= 0; i--) {
      const item = items[i]!;
      if (assigned.has(item.span.span_id)) continue;
      if (item.seq < seq) {
        assigned.set(item.span.span_id, value);
        break;
      }
    }
  }

  return items.map((item) => {
    const triplet: Triplet = {
      prompt: { token_ids: item.promptIds },
      response: { token_ids: item.responseIds },
      reward: assigned.get(item.span.span_id) ?? null,
      metadata: { response_id: item.requestId },
    };
    if (Array.isArray(item.logprobs)) triplet.response.logprobs = item.logprobs;
    const images = item.span.attributes['agl.prompt.images'];
    if (typeof images === 'string') triplet.prompt.images = JSON.parse(images);
    return triplet;
  });
}
