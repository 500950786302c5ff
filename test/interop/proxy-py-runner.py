"""A real Agent-lightning v0.3 LitAgentRunner (AgentOps tracer) whose agent calls the agl-temporal proxy with the
`openai` client, as examples/tinker/hello.py does, then emits a reward. Afterwards Agent-lightning's own client and
adapters read each rollout's spans (so the proxy's spans validate as `Span`): one JSON line per rollout.
Usage: python proxy-py-runner.py STORE_URL MAX_ROLLOUTS ROLLOUT_ID..."""
import asyncio
import json
import sys

import agentlightning as agl
from agentlightning import LightningStoreClient, LitAgentRunner, LlmProxyTraceToTriplet, TracerTraceToTriplet
from agentlightning.tracer.agentops import AgentOpsTracer
from openai import OpenAI


@agl.rollout
def hello(task, llm, rollout):
    client = OpenAI(base_url=llm.endpoint, api_key="dummy", max_retries=0)
    response = client.chat.completions.create(
        model=llm.model, messages=[{"role": "user", "content": f"Let's play a game. Say you are {task['name']}."}], max_tokens=16
    )
    print(f"{rollout.rollout_id} endpoint={llm.endpoint} -> {response.choices[0].message.content!r}", flush=True)
    agl.emit_reward(float(task["reward"]))


async def adapt(url: str, rollout_ids: list) -> None:
    client = LightningStoreClient(url)
    try:
        for rid in rollout_ids:
            spans = list(await client.query_spans(rid, "latest"))
            proxy = LlmProxyTraceToTriplet().adapt(spans)
            tracer = TracerTraceToTriplet(_skip_empty_token_spans=True).adapt(spans)
            both = TracerTraceToTriplet(llm_call_match=r"openai\.chat\.completion|litellm_request", _skip_empty_token_spans=True).adapt(spans)
            print("ADAPTED " + json.dumps({"rollout_id": rid, "span_names": [s.name for s in spans],
                                           "proxy": [t.model_dump(mode="json") for t in proxy],
                                           "tracer": [t.model_dump(mode="json") for t in tracer],
                                           "both": [t.model_dump(mode="json") for t in both]}), flush=True)
    finally:
        await client.close()


def main() -> None:
    url, max_rollouts, rollout_ids = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    runner = LitAgentRunner(tracer=AgentOpsTracer(), max_rollouts=max_rollouts, poll_interval=0.3, interval_jitter=0.1)
    with runner.run_context(agent=hello, store=LightningStoreClient(url), worker_id=0):
        asyncio.run(runner.iter())
    print("runner finished", flush=True)
    asyncio.run(adapt(url, rollout_ids))


if __name__ == "__main__":
    main()
