// TracerTraceToTriplet (adapter/triplet.py, §6.1-§6.3): LLM-call spans recorded on the agent side
// (AgentOps `openai.chat.completion` spans carrying token ids) become triplets, and each reward
// span is given to the LLM call that ended most recently before it.
import { firstIntList, firstString, firstUnflattened } from '../../spans/attributes';
import { getRewardValue, isRewardSpan } from '../../spans/rewards';
import { agentName, buildTraceTree, repairHierarchy, traverse } from './trace-tree';
import type { TraceNode, TreeSpan } from './trace-tree';
import type { StoreSpan, Triplet } from './types';

export type RewardMatchPolicy = 'first_occurrence' | 'first_sibling';

export interface TracerAdapterOptions {
  /** Re-parent spans that lost their parent (default true). */
  repairHierarchy?: boolean;
  /** Regex on span names selecting LLM calls (default `openai\.chat\.completion`). */
  llmCallMatch?: string;
  /** Regex on agent names; only LLM calls inside a matching agent's subtree count (default: all). */
  agentMatch?: string | null;
  /** Ignore LLM calls made inside reward spans (default true). */
  excludeLlmCallInReward?: boolean;
  rewardMatch?: RewardMatchPolicy;
  /** Drop calls without prompt or response token ids before matching rewards (seed: true). */
  skipEmptyTokenSpans?: boolean;
}

const RESPONSE_ID_KEYS = ['gen_ai.response.id', 'agentlightning.operation.output.id'];

interface LlmCall {
  node: TraceNode;
  agent: string;
}

/** find_llm_calls: depth-first, deduplicated by response id, honouring agent and reward scopes. */
export function findLlmCalls(root: TraceNode, llmCallMatch: string, agentMatch: string | null, excludeLlmCallInReward: boolean): LlmCall[] {
  const callRe = new RegExp(llmCallMatch);
  const agentRe = agentMatch === null ? null : new RegExp(agentMatch);
  const seenResponseIds = new Set<string>();
  const calls: LlmCall[] = [];

  // withinAgent: the enclosing matching agent's name ("*" without agentMatch), null outside one.
  // withinReward / withinLlmCall: null means "not tracked", as Python's Optional[bool].
  const visit = (node: TraceNode, withinAgent: string | null, withinReward: boolean | null, withinLlmCall: boolean) => {
    const span = node.span;
    let isCall = withinAgent !== null && withinReward !== true && callRe.test(span.name);
    if (isCall) {
      const responseId = firstString(span.attributes, RESPONSE_ID_KEYS);
      if (responseId === null && withinLlmCall) isCall = false; // an inner span of a call already taken
      if (responseId !== null && seenResponseIds.has(responseId)) isCall = false; // same response recorded twice
      if (isCall) {
        calls.push({ node, agent: withinAgent! });
        if (responseId !== null) seenResponseIds.add(responseId);
        withinLlmCall = true;
      }
    }
    const name = agentName(span);
    if (name !== null) withinAgent = agentRe === null || agentRe.test(name) ? name : null;
    if (withinReward !== null && isRewardSpan(span)) withinReward = true;
    for (const child of node.children) visit(child, withinAgent, withinReward, withinLlmCall);
  };
  visit(root, agentMatch === null ? '*' : null, excludeLlmCallInReward ? false : null, false);
  return calls;
}

/**
 * match_rewards: walk spans by start time (depth-first order breaks ties); at each reward span,
 * give its value to the latest call that ended no later than the reward started and has no reward
 * yet. `first_sibling` does the same among the children of each span only.
 */
export function matchRewards(root: TraceNode, policy: RewardMatchPolicy, calls: readonly TraceNode[]): Map<string, number | null> {
  const callIds = new Set(calls.map((c) => c.id));
  const rewards = new Map<string, number | null>();
  const assign = (pending: readonly { id: string; end: number | null }[], rewardNode: TraceNode, value: number) => {
    const start = rewardNode.span.start_time ?? 0;
    for (let i = pending.length - 1; i >= 0; i--) {
      const { id, end } = pending[i]!;
      if (end === null || end > start) continue; // the call was still running
      if (rewards.has(id)) continue;
      rewards.set(id, value);
      return;
    }
  };

  if (policy === 'first_occurrence') {
    const byStart = traverse(root).sort((a, b) => (a.span.start_time ?? 0) - (b.span.start_time ?? 0));
    const pending: { id: string; end: number | null }[] = [];
    for (const node of byStart) {
      if (callIds.has(node.id)) pending.push({ id: node.id, end: node.span.end_time });
      const value = getRewardValue(node.span);
      if (value !== null) assign(pending, node, value);
    }
  } else {
    for (const node of traverse(root)) {
      const pending: { id: string; end: number | null }[] = [];
      for (const child of node.children) {
        if (callIds.has(child.id)) pending.push({ id: child.id, end: child.span.end_time });
        const value = getRewardValue(child.span);
        if (value !== null) assign(pending, child, value);
      }
    }
  }
  return rewards;
}

/** `image_url.url` parts of the prompt messages, in order (content may be a JSON string). */
export function promptImageUrls(rawPrompt: unknown): string[] {
  let messages: unknown[] = [];
  if (Array.isArray(rawPrompt)) messages = rawPrompt;
  else if (rawPrompt && typeof rawPrompt === 'object') {
    const dict = rawPrompt as Record<string, unknown>;
    const numeric = Object.keys(dict).filter((k) => /^[0-9]+$/.test(k));
    messages = numeric.length > 0 ? numeric.sort((a, b) => Number(a) - Number(b)).map((k) => dict[k]) : [dict];
  } else return [];

  const urls: string[] = [];
  for (const message of messages) {
    if (!message || typeof message !== 'object' || Array.isArray(message) || !('content' in message)) continue;
    let content = (message as { content: unknown }).content;
    if (typeof content === 'string') {
      try {
        content = JSON.parse(content);
      } catch {
        continue;
      }
    }
    if (!Array.isArray(content)) continue;
    for (const part of content) {
      if (!part || typeof part !== 'object' || (part as { type?: unknown }).type !== 'image_url') continue;
      const imageUrl = (part as { image_url?: unknown }).image_url;
      if (imageUrl && typeof imageUrl === 'object' && !Array.isArray(imageUrl) && 'url' in imageUrl) {
        urls.push((imageUrl as { url: string }).url);
      }
    }
  }
  return urls;
}

function withoutKeys(x: unknown, keys: readonly string[]): unknown {
  if (!x || typeof x !== 'object' || Array.isArray(x)) return x;
  const out = { ...(x as Record<string, unknown>) };
  for (const k of keys) delete out[k];
  return out;
}

/** span_to_triplet: where AgentOps (and Weave) put token ids, messages and logprobs. */
export function spanToTriplet(span: TreeSpan, agent: string): Triplet {
  const a = span.attributes;
  const promptIds = firstIntList(a, ['prompt_token_ids', 'agentlightning.operation.output.prompt_token_ids']) ?? [];
  const responseIds =
    firstIntList(a, [
      'response_token_ids',
      'agentlightning.operation.output.response_token_ids.0',
      'agentlightning.operation.output.choices.0.token_ids',
      'agentlightning.operation.output.choices.0.provider_specific_fields.token_ids',
    ]) ?? [];
  const rawPrompt = firstUnflattened(a, ['gen_ai.prompt', 'agentlightning.operation.input.messages']);
  const rawCompletion = firstUnflattened(a, ['gen_ai.completion', 'agentlightning.operation.output.choices']);
  const triplet: Triplet = {
    prompt: { token_ids: promptIds, raw_content: rawPrompt, image_urls: promptImageUrls(rawPrompt) },
    response: { token_ids: responseIds, raw_content: rawCompletion },
    reward: null,
    metadata: {
      request: withoutKeys(firstUnflattened(a, ['gen_ai.request', 'agentlightning.operation.input']), ['messages']),
      response: withoutKeys(firstUnflattened(a, ['gen_ai.response', 'agentlightning.operation.output']), [
        'choices',
        'prompt_token_ids',
        'response_token_ids',
      ]),
      response_id: firstString(a, RESPONSE_ID_KEYS),
      agent_name: agent,
    },
  };
  const logprobs = a['logprobs.content'];
  if (typeof logprobs === 'string') triplet.response.logprobs = JSON.parse(logprobs);
  // The proxy's record of a vision prompt's images (proxy/span.ts), at their positions in prompt_token_ids.
  const images = a['agl.prompt.images'];
  if (typeof images === 'string') triplet.prompt.images = JSON.parse(images);
  return triplet;
}

/**
 * TracerTraceToTriplet.adapt. An empty span list, or one without any root (every parent recorded,
 * i.e. a parent cycle), gives no triplets where Python raises: one bad trace must not fail a step.
 */
export function tracerTraceToTriplet(spans: readonly StoreSpan[], options: TracerAdapterOptions = {}): Triplet[] {
  if (spans.length === 0) return [];
  const ids = new Set(spans.map((s) => s.span_id));
  if (spans.every((s) => s.parent_id != null && ids.has(s.parent_id))) return [];
  const root = buildTraceTree(spans);
  if (options.repairHierarchy ?? true) repairHierarchy(root);
  const calls = findLlmCalls(
    root,
    options.llmCallMatch ?? 'openai\\.chat\\.completion',
    options.agentMatch ?? null,
    options.excludeLlmCallInReward ?? true,
  );
  const kept: { node: TraceNode; triplet: Triplet }[] = [];
  for (const { node, agent } of calls) {
    const triplet = spanToTriplet(node.span, agent);
    if (options.skipEmptyTokenSpans && (triplet.prompt.token_ids!.length === 0 || triplet.response.token_ids!.length === 0)) continue;
    kept.push({ node, triplet });
  }
  const rewards = matchRewards(root, options.rewardMatch ?? 'first_occurrence', kept.map((k) => k.node));
  return kept.map(({ node, triplet }) => ({ ...triplet, reward: rewards.get(node.id) ?? null }));
}
