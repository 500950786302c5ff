"""Small agents on the agent APIs of the agl-temporal proxy, each with its own real client: the `openai` package on
Responses and Completions, the OpenAI Agents SDK (a tool-using agent) on Responses, the `anthropic` package on
Messages, with and without streaming. Each plays two turns (a tool round trip when the model calls the tool).

Usage: agent-apis.py, then one JSON line per agent to run on stdin: {"id", "client", "base_url", "question"}. Agents
run at once, each in its thread; for each a JSON line on stdout: {"id", "client", "answers": [{"prompt_token_ids",
"token_ids", "text"}], "reward", "notes"} (the answers are what the client was answered, turn by turn, read from what
the client returned), or {"id", "error"}. One process serves a whole test, so the imports are paid once.
"""
import asyncio
import json
import sys
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor

import anthropic
import httpx2
import openai
from agents import Agent, ModelSettings, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled

set_tracing_disabled(True)
RESPONSES_TOOLS = [{"type": "function", "name": "add", "description": "Add two integers.",
                    "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}}]
ANTHROPIC_TOOLS = [{"name": "add", "description": "Add two integers.",
                    "input_schema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}}]


def add_tool(arguments):
    args = json.loads(arguments) if isinstance(arguments, str) else arguments
    return str(int(args.get("a", 0)) + int(args.get("b", 0)))


def answer(prompt_ids, token_ids, text):
    return {"prompt_token_ids": prompt_ids, "token_ids": token_ids, "text": text}


def openai_responses(base_url, question):
    client = openai.OpenAI(base_url=base_url, api_key="unused", max_retries=2)
    first = client.responses.create(model="policy", instructions="Answer briefly.", input=question, tools=RESPONSES_TOOLS,
                                    max_output_tokens=40)
    d = first.to_dict()
    answers = [answer(d["prompt_token_ids"], d["token_ids"], first.output_text)]
    calls = [o for o in first.output if o.type == "function_call"]
    follow = [{"type": "function_call_output", "call_id": c.call_id, "output": add_tool(c.arguments)} for c in calls] or "Again."
    events = list(client.responses.create(model="policy", previous_response_id=first.id, input=follow, tools=RESPONSES_TOOLS,
                                          max_output_tokens=40, stream=True))
    last = events[-1].response
    d = last.to_dict()
    answers.append(answer(d["prompt_token_ids"], d["token_ids"], last.output_text))
    notes = {"first_status": first.status, "first_output": [o.type for o in first.output], "events": [e.type for e in events],
             "continued_from": last.previous_response_id == first.id}
    return answers, notes


def openai_completions(base_url, question):
    client = openai.OpenAI(base_url=base_url, api_key="unused", max_retries=2)
    first = client.completions.create(model="policy", prompt=f"Q: {question}\nA:", max_tokens=12, stop=["\n\n"])
    d = first.to_dict()
    answers = [answer(d["prompt_token_ids"], d["choices"][0]["token_ids"], first.choices[0].text)]
    # The same prompt again, as token ids, streamed.
    chunks = list(client.completions.create(model="policy", prompt=d["prompt_token_ids"], max_tokens=12, stream=True,
                                            stream_options={"include_usage": True}))
    last = chunks[-1].to_dict()
    text = "".join(c.choices[0].text for c in chunks if c.choices)
    answers.append(answer(last["prompt_token_ids"], last["choices"][0]["token_ids"], text))
    return answers, {"finish_reason": first.choices[0].finish_reason, "logprobs": len(first.choices[0].logprobs.token_logprobs),
                     "usage": last.get("usage")}


def agents_sdk(base_url, question):
    seen = []

    async def record(response):
        await response.aread()
        if response.status_code == 200:
            seen.append(json.loads(response.content))

    @function_tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    client = openai.AsyncOpenAI(base_url=base_url, api_key="unused", max_retries=2,
                                http_client=httpx2.AsyncClient(event_hooks={"response": [record]}))
    agent = Agent(name="calculator", instructions="Use add.", tools=[add], model_settings=ModelSettings(max_tokens=40),
                  model=OpenAIResponsesModel(model="policy", openai_client=client))
    notes = {}
    try:
        result = asyncio.run(Runner.run(agent, question, max_turns=3))
        notes["final_output"] = result.final_output
    except Exception as e:  # an untrained model runs out of tokens ("incomplete"); the SDK raises, the agent scores 0
        notes["error"] = type(e).__name__
    answers = [answer(r["prompt_token_ids"], r["token_ids"], "".join(
        p["text"] for o in r["output"] if o["type"] == "message" for p in o["content"])) for r in seen]
    notes["outputs"] = [[o["type"] for o in r["output"]] for r in seen]
    notes["statuses"] = [r["status"] for r in seen]
    return answers, notes


def anthropic_turns(base_url, question, stream):
    client = anthropic.Anthropic(base_url=base_url, api_key="unused", max_retries=2)
    messages = [{"role": "user", "content": question}]
    answers, reasons = [], []
    for _ in range(2):
        kwargs = dict(model="policy", max_tokens=40, system="Answer briefly.", messages=messages, tools=ANTHROPIC_TOOLS,
                      extra_body={"top_k": 50})
        if stream:
            with client.messages.stream(**kwargs) as s:
                events = list(s)
                message = s.get_final_message()
            prompt_ids = next(e for e in events if e.type == "message_start").message.to_dict()["prompt_token_ids"]
            token_ids = next(e for e in events if e.type == "message_delta").to_dict()["token_ids"]
        else:
            message = client.messages.create(**kwargs)
            prompt_ids, token_ids = message.to_dict()["prompt_token_ids"], message.to_dict()["token_ids"]
        text = "".join(b.text for b in message.content if b.type == "text")
        answers.append(answer(prompt_ids, token_ids, text))
        reasons.append(message.stop_reason)
        messages.append({"role": "assistant", "content": [b.to_dict() for b in message.content if b.type in ("text", "tool_use")] or ""})
        uses = [b for b in message.content if b.type == "tool_use"]
        results = [{"type": "tool_result", "tool_use_id": b.id, "content": add_tool(b.input)} for b in uses]
        messages.append({"role": "user", "content": results or "Again."})
    return answers, {"stop_reasons": reasons}


CLIENTS = {
    "openai-responses": openai_responses,
    "openai-completions": openai_completions,
    "agents-sdk": agents_sdk,
    "anthropic": lambda url, q: anthropic_turns(url, q, stream=False),
    "anthropic-stream": lambda url, q: anthropic_turns(url, q, stream=True),
}


def play(item, lock):
    try:
        answers, notes = CLIENTS[item["client"]](item["base_url"], item["question"])
        # A reward that differs between rollouts (the plumbing, not the learning, is under test).
        reward = (sum(len(a["token_ids"]) for a in answers) % 5) / 4
        out = {"id": item["id"], "client": item["client"], "answers": answers, "reward": reward, "notes": notes,
               "versions": {"openai": openai.__version__, "anthropic": anthropic.__version__}}
    except Exception:
        out = {"id": item["id"], "error": traceback.format_exc()}
    with lock:
        print(json.dumps(out), flush=True)


def main():
    lock = threading.Lock()
    with ThreadPoolExecutor(max_workers=8) as pool:
        print(json.dumps({"ready": True}), flush=True)
        for line in sys.stdin:
            if line.strip():
                pool.submit(play, json.loads(line), lock)


if __name__ == "__main__":
    main()
