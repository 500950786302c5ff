// The metadata a run puts on its rollouts when Agent-lightning 1.0 agents serve it (run config `aglController`):
// it makes them visible to the gateway's 1.0 API with what a controller needs to launch their agents.
import type { AglControllerConfig } from '../config/agl-controller';
import type { JsonObject } from '../store/types';
import { AGL1_KEY, type Agl1Meta } from './types';

export function launchMetadata(cfg: AglControllerConfig | null | undefined): JsonObject {
  if (!cfg) return {};
  const meta: Agl1Meta = {
    config: {
      local: cfg.agentClass ? { agent_class: cfg.agentClass, env_map: cfg.envMap } : null,
      k8s: cfg.jobTemplate ? { job_template: cfg.jobTemplate } : null,
    },
  };
  return { [AGL1_KEY]: meta as unknown as JsonObject };
}
