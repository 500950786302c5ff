// Agent workflows that train in place (`@agl-temporal/agents/temporal`): the model provider for the agent worker's
// `@temporalio/ai-sdk` plugin, and how a workflow id names its rollout. Workflow code imports
// `@agl-temporal/agents/workflow` (reportReward) instead.
export { trainingProvider, type TrainingProviderOptions } from './training-provider';
export { agentRolloutWorkflowId, rolloutScopeOf, type AgentRolloutMemo, type RolloutScope } from './rollout-ids';
