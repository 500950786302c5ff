// Spans -> triplets, as Agent-lightning v0.3's adapters (agentlightning/adapter/triplet.py).
import { llmProxyTraceToTriplet } from './llm-proxy-trace-to-triplet';
import { tracerTraceToTriplet } from './tracer-trace-to-triplet';
import type { StoreSpan, Triplet } from './types';

export * from './types';
export { tracerTraceToTriplet, findLlmCalls, matchRewards, spanToTriplet, promptImageUrls } from './tracer-trace-to-triplet';
export type { TracerAdapterOptions, RewardMatchPolicy } from './tracer-trace-to-triplet';
export { llmProxyTraceToTriplet } from './llm-proxy-trace-to-triplet';
export { getRewardValue, isRewardSpan } from '../../spans/rewards';
export { buildTraceTree, repairHierarchy, traverse, agentName } from './trace-tree';
export type { TraceNode, TreeSpan } from './trace-tree';
export { unflattenAttributes, filterAndUnflatten } from '../../spans/attributes';

export type TripletAdapter = (spans: readonly StoreSpan[]) => Triplet[];

/**
 * LLM-call spans for the seed's adapter: agent-side calls (AgentOps `openai.chat.completion`, Python
 * runners) and the calls our proxy records (`litellm_request`, the only LLM spans TypeScript agents
 * leave). When both exist for one call they share `gen_ai.response.id` and repairHierarchy nests the
 * proxy span inside the client span, so the client span is kept: on traces recorded with Python
 * Agent-lightning this gives exactly Python's default answers (pythonFixtures.test.ts).
 */
export const DEFAULT_LLM_CALL_MATCH = 'openai\\.chat\\.completion|litellm_request';

export interface AdapterConfig {
  adapterFromLlmProxy: boolean;
  adapterAgentMatch?: string | null;
  /** Regex for LLM-call span names (tracer path only); default DEFAULT_LLM_CALL_MATCH. */
  adapterLlmCallMatch?: string;
}

/**
 * The seed's choice (train.main): proxy spans when adapterFromLlmProxy (agentMatch must then be
 * unset), else LLM-call spans with empty-token calls skipped. The Python proxy adapter reads no
 * logprobs, so only the tracer path can train on Tinker, as in the seed.
 */
export function makeTripletAdapter(config: AdapterConfig): TripletAdapter {
  if (config.adapterFromLlmProxy) {
    if (config.adapterAgentMatch != null) throw new Error('adapterAgentMatch is not supported when adapterFromLlmProxy is true');
    return llmProxyTraceToTriplet;
  }
  const agentMatch = config.adapterAgentMatch ?? null;
  const llmCallMatch = config.adapterLlmCallMatch ?? DEFAULT_LLM_CALL_MATCH;
  return (spans) => tracerTraceToTriplet(spans, { agentMatch, llmCallMatch, skipEmptyTokenSpans: true });
}
