"""A fleet member of real Agent-lightning v0.3 runners playing the seed's hello task through our proxy.

Usage: python python-hello-runner.py STORE_URL WORKER_ID
The agent is the seed's hello.py agent: the OpenAI client on the rollout-scoped endpoint the runner hands it,
the same prompt and the same reward rule, emitted with agl.emit_reward. It runs until killed.
"""
import asyncio
import sys

import agentlightning as agl
from agentlightning import LightningStoreClient, LitAgentRunner
from agentlightning.tracer.agentops import AgentOpsTracer
from openai import OpenAI


@agl.rollout
def hello(task, llm, rollout):
    client = OpenAI(base_url=llm.endpoint, api_key="dummy", timeout=120)
    response = client.chat.completions.create(
        model=llm.model,
        messages=[{"role": "user", "content": f"Let's play a game. Say you are {task}."}],
    )
    content = (response.choices[0].message.content or "").lower()
    if ("i am " + task) in content or ("i'm " + task) in content:
        reward = 1.0
    elif ("not " + task) in content:
        reward = -1.0
    else:
        reward = 0.0
    agl.emit_reward(reward)


def main() -> None:
    url, worker_id = sys.argv[1], int(sys.argv[2])
    runner = LitAgentRunner(tracer=AgentOpsTracer(), poll_interval=0.3, interval_jitter=0.1)
    with runner.run_context(agent=hello, store=LightningStoreClient(url), worker_id=worker_id):
        print("python runner polling", flush=True)
        asyncio.run(runner.iter())


if __name__ == "__main__":
    main()
