"""The seed's hello task as an Agent-lightning 1.0 agent, for `agl-controller` (runner_type=local).

The controller builds `HelloAgent()` and awaits `.run()` in a process of its own, with the environment a 1.0
agent gets: AGL_OPENAI_BASE_URL (the gateway's proxy for this rollout), AGL_EVENT_URL (where its events go),
AGL_KEY, plus the rollout's `config.local.env_map`; this one reads its task from AGL_TASK (env_map
{"AGL_TASK": "input"}). It asks the policy once, scores the answer with the seed's rule (1 for "I am N" /
"I'm N", -1 for "not N", 0 otherwise) and posts the score as a `reward` event. Plain `openai` and `httpx` code,
as upstream's examples are: nothing here is specific to agl-temporal.

Run config: "aglController": {"agentClass": "agl1_hello:HelloAgent", "envMap": {"AGL_TASK": "input"}}, with this
folder on the controller's PYTHONPATH.
"""

import os

import httpx
from openai import OpenAI


def hello_reward(task: str, answer: str) -> float:
    text = answer.lower()
    if f"i am {task}" in text or f"i'm {task}" in text:
        return 1.0
    if f"not {task}" in text:
        return -1.0
    return 0.0


class HelloAgent:
    def run(self) -> None:
        task = os.environ["AGL_TASK"]
        key = os.environ.get("AGL_KEY") or ""
        client = OpenAI(base_url=os.environ["AGL_OPENAI_BASE_URL"], api_key=key or "unused", timeout=120, max_retries=5)
        response = client.chat.completions.create(
            model="policy",  # the gateway names the model
            messages=[{"role": "user", "content": f"Let's play a game. Say you are {task}."}],
        )
        reward = hello_reward(task, response.choices[0].message.content or "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        httpx.post(
            os.environ["AGL_EVENT_URL"],
            json={"event_type": "reward", "data": {"value": reward}},
            headers=headers,
            timeout=30,
        ).raise_for_status()
