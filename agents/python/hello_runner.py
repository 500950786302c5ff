"""An Agent-lightning 0.3 runner of the seed's hello agent, against agl-temporal's store and LLM proxy.

    python agents/python/hello_runner.py --store http://127.0.0.1:4747 [--worker-id N]

The agent is ordinary Agent-lightning 0.3 code: an `@agl.rollout` function that calls the OpenAI-compatible
endpoint the runner hands it (`llm.endpoint`: the proxy, scoped to this rollout and attempt, so every call is
recorded for training) and emits a reward. Replace `hello` with your agent; nothing else here is specific to
agl-temporal. One process is one runner; start several (each with its own --worker-id) for more rollouts at once.
It runs until stopped (Ctrl-C).
"""
import argparse
import asyncio

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
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", default="http://127.0.0.1:4747", help="the store npm start prints (default %(default)s)")
    parser.add_argument("--worker-id", type=int, default=0, help="distinct per runner process (default %(default)s)")
    args = parser.parse_args()
    runner = LitAgentRunner(tracer=AgentOpsTracer(), poll_interval=0.3, interval_jitter=0.1)
    with runner.run_context(agent=hello, store=LightningStoreClient(args.store), worker_id=args.worker_id):
        print(f"python runner {args.worker_id} polling {args.store}", flush=True)
        asyncio.run(runner.iter())


if __name__ == "__main__":
    main()
