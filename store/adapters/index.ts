// Spans -> triplets, as Agent-lightning v0.3's adapters (agentlightning/adapter/triplet.py).
import { llmProxyTraceToTriplet } from './llmProxyTraceToTriplet';
import { tracerTraceToTriplet } from './tracerTraceToTriplet';
import type { StoreSpan, Triplet } from './types';

export * from './types';
export { tracerTraceToTriplet, findLlmCalls, matchRewards, spanToTriplet, promptImageUrls } from './tracerTraceToTriplet';
export type { TracerAdapterOptions, RewardMatchPolicy } from './tracerTraceToTriplet';
export { llmProxyTraceToTriplet } from './llmProxyTraceToTriplet';
export { getRewardValue, isRewardSpan } from './rewards';
export { buildTraceTree, repairHierarchy, traverse, agentName } from './traceTree';
export type { TraceNode, TreeSpan } from './traceTree';
export { unflattenAttributes, filterAndUnflatten } from './attributes';
export { parsePythonLiteral, literalEvalMaybe } from './pythonLiteral';

export type TripletAdapter = (spans: readonly StoreSpan[]) => Triplet[];

export interface AdapterConfig {
  adapterFromLlmProxy: boolean;
  adapterAgentMatch?: string | null;
}

/**
 * The seed's choice (train.main): proxy spans when adapterFromLlmProxy (agentMatch must then be
 * unset), else agent-side spans with empty-token calls skipped.
 */
export function makeTripletAdapter(config: AdapterConfig): TripletAdapter {
  if (config.adapterFromLlmProxy) {
    if (config.adapterAgentMatch != null) throw new Error('adapterAgentMatch is not supported when adapterFromLlmProxy is true');
    return llmProxyTraceToTriplet;
  }
  const agentMatch = config.adapterAgentMatch ?? null;
  return (spans) => tracerTraceToTriplet(spans, { agentMatch, skipEmptyTokenSpans: true });
}
