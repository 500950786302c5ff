"""A real Agent-lightning v0.3 LitAgentRunner (AgentOps tracer) whose agent calls the agl-temporal proxy with the
`openai` client, as examples/tinker/hello.py does, then emits a reward.
Usage: python proxy-py-runner.py STORE_URL MAX_ROLLOUTS"""
import asyncio
import sys

import agentlightning as agl
from agentlightning import LightningStoreClient, LitAgentRunner
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


def main() -> None:
    url, max_rollouts = sys.argv[1], int(sys.argv[2])
    runner = LitAgentRunner(tracer=AgentOpsTracer(), max_rollouts=max_rollouts, poll_interval=0.3, interval_jitter=0.1)
    with runner.run_context(agent=hello, store=LightningStoreClient(url), worker_id=0):
        asyncio.run(runner.iter())
    print("runner finished", flush=True)


if __name__ == "__main__":
    main()
