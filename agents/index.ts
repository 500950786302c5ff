// The runner library's public surface (the `@agl-temporal/agents` package, packages/agents/): runners that serve
// a store's rollouts with an agent function, and the helpers an agent needs.
export { AgentRunner, startRunners, type AgentContext, type AgentFunction, type RunnerGroup, type RunnerOptions, type RunnerStats } from './runner';
export { pickLlm, scopedProxyEndpoint, type AgentLlm } from '../store/llm-resource';
export { rewardFromResult } from './reward';
export { rewardSpan } from '../store/reward-span';
export { StoreClient } from '../store/client';
