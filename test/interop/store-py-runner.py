"""A real Agent-lightning v0.3 LitAgentRunner (default AgentOps tracer) running a no-LLM agent against a store.

Usage: python store-py-runner.py STORE_URL MAX_ROLLOUTS [agentops|otel]
(agentops, the default tracer, batches spans; otel exports each span to /v1/traces as it ends.)
Tasks are {"n": int, "fail": bool}: the agent records a message naming its LLM endpoint, emits reward n / 10,
and raises when "fail" is set.
"""
import asyncio
import sys
import time

import agentlightning as agl
from agentlightning import LightningStoreClient, LitAgentRunner
from agentlightning.tracer.agentops import AgentOpsTracer
from agentlightning.tracer.otel import OtelTracer


@agl.rollout
def no_llm_agent(task, llm, rollout):
    time.sleep(0.5)  # long enough for the runner's heartbeat thread (0.3 s interval here) to report
    if task.get("fail"):
        raise RuntimeError(f"planned failure for task {task['n']}")
    agl.emit_message(f"endpoint={llm.endpoint} model={llm.model} rollout={rollout.rollout_id}")
    agl.emit_reward(float(task["n"]) / 10.0)
    return None


def main() -> None:
    url, max_rollouts = sys.argv[1], int(sys.argv[2])
    tracer = OtelTracer() if len(sys.argv) > 3 and sys.argv[3] == "otel" else AgentOpsTracer()
    store = LightningStoreClient(url)
    runner = LitAgentRunner(
        tracer=tracer, max_rollouts=max_rollouts, poll_interval=0.3, interval_jitter=0.1,
        heartbeat_interval=0.3,
    )
    with runner.run_context(agent=no_llm_agent, store=store, worker_id=0):
        asyncio.run(runner.iter())
    print("runner finished", flush=True)


if __name__ == "__main__":
    main()
