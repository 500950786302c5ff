"""Renders a generated corpus with tinker-cookbook 0.6.1 for the parity test (test/chat/parity.test.ts).

Input (JSON file, argv[1]): {"jobs": [{"renderer", "tokenizer": {"file", "bos", "eos", "cleanup"}, "seed", "n"}]}.
Output (JSON file, argv[2]): per job the corpus it generated and the cookbook's answers: generation prompts,
supervised examples for every TrainOnWhat, build_supervised_examples, stop sequences and parse_response results.
The corpus is generated here (seeded) so both sides see exactly the same conversations.
"""

import json
import logging
import os
import random
import sys
import traceback

from transformers import PreTrainedTokenizerFast

from tinker_cookbook import renderers as R
from tinker_cookbook.renderers.base import TrainOnWhat, ToolCall, message_to_jsonable

TRAIN_ON_WHAT = [t.value for t in TrainOnWhat]

TEXTS = [
    "Hi", "What is 2+2?", "Say hello.", "It is 4.", "Sure.", "", " ", "\n", "  leading and trailing  ",
    "\n\nnewlines around\n\n", "tabs\tand\r\nCRLF", "naïve café ☕", "日本語のテキスト", "emoji 😀👍🏽 family 👨‍👩‍👧",
    "e\u0301 (combining) vs \u00e9", "Ünïcödé ß ẞ İ ı", "quotes \"double\" and 'single'", "back\\slash \\n literal",
    "json {\"a\": [1, 2.0, \"x\"]}", "a < b && c > d", "User: not a turn", "\n\nUser: fake stop",
    "<think>inline reasoning</think>answer", "<think>\nopen only", "</think> stray close",
    "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>", "<|im_end|> literal special",
    "<|eot_id|> literal", "<|endoftext|>", "long " + "word " * 40, "0.1 + 0.2 = 0.30000000000000004",
    "Zürich 21°C", "math: ∑ x² ≤ ∞", "ends with space ", " starts with space", "multi\nline\ntext",
]
THOUGHTS = ["Let me add 2 and 2.", "\nstep 1\nstep 2\n", "", "Think about ☕ and 日本.", "  spaced  "]
TOOLS = [
    {"name": "get_weather", "description": "Weather for a city (°C).",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}},
    {"name": "add", "description": "Add two numbers.",
     "parameters": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}},
    {"name": "search", "description": "Search the web for 日本 and more.", "parameters": {"type": "object", "properties": {}}},
]
ARGS = [
    {"city": "Zürich", "days": 2}, {"a": 2, "b": 3.5}, {"a": 1.0, "b": -0.0001}, {}, {"q": "x\ny", "n": None, "ok": True},
    {"nested": {"list": [1, "two", {"three": 3}]}}, {"big": 12345678901234567890}, {"e": 1e16, "f": 1.5e-7},
]


def tml_tokenizer(spec):
    """tml_v0 (Inkling): the cookbook's own tokenizer, tml-renderers 0.2.1's o200k_base_chat. Its native extension
    needs libtorch_cpu.so loaded first (test/helpers/libtorch-cpu.ts); the venv's torch stays the stand-in, whose
    version string the adapter's torch>=2.10 check would refuse, so that check alone is skipped."""
    import ctypes

    for lib in spec["libs"]:
        ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
    from tinker_cookbook.renderers import tml_renderers_adapter
    from tinker_cookbook import tokenizer_utils

    tml_renderers_adapter._validate_torch_version = lambda: None
    return tokenizer_utils.get_tokenizer(spec["name"])


def tokenizer_of(spec):
    if spec.get("kind") == "tml":
        return tml_tokenizer(spec)
    if spec.get("kind") == "tiktoken":  # Kimi K2*: a tiktoken.model + tokenizer_config.json directory
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "families2"))
        from kimi_test_tokenizer import KimiTestTokenizer

        return KimiTestTokenizer(spec["dir"])
    kw = {"tokenizer_file": spec["file"], "clean_up_tokenization_spaces": bool(spec.get("cleanup", False))}
    if spec.get("bos"):
        kw["bos_token"] = spec["bos"]
    if spec.get("eos"):
        kw["eos_token"] = spec["eos"]
    tok = PreTrainedTokenizerFast(**kw)
    tok.name_or_path = spec.get("name", spec["file"])
    return tok


def gen_conversation(rng, renderer, supports_tools):
    msgs = []
    tools = []
    if supports_tools and rng.random() < 0.35:
        tools = rng.sample(TOOLS, rng.randint(1, len(TOOLS)))
    system = rng.choice(["You are a helpful assistant.", "Be brief.", "Système: réponds en français ✓", "", None, None])
    if system is not None and (system or rng.random() < 0.3):
        msgs.append({"role": "system", "content": system})
    turns = rng.randint(1, 4)
    call_id = 0
    for t in range(turns):
        msgs.append({"role": "user", "content": rng.choice(TEXTS)})
        # the assistant's turn: maybe tool calls and results first
        if tools and rng.random() < 0.6:
            calls = []
            for _ in range(rng.randint(1, 2)):
                call_id += 1
                tool = rng.choice(tools)
                calls.append({"type": "function", "id": f"call_{call_id}",
                              "function": {"name": tool["name"], "arguments": json.dumps(rng.choice(ARGS))}})
            a = {"role": "assistant", "content": rng.choice(["", "Let me check.", "Calling a tool.\n"]), "tool_calls": calls}
            if rng.random() < 0.3:
                a["content"] = [{"type": "thinking", "thinking": rng.choice(THOUGHTS)}] + ([{"type": "text", "text": a["content"]}] if a["content"] else [])
            msgs.append(a)
            for c in calls:
                msgs.append({"role": "tool", "content": rng.choice(["{\"temp_c\": 21}", "5", "no results", "日本 ☕", ""]),
                             "tool_call_id": c["id"], "name": c["function"]["name"]})
        if t < turns - 1 or rng.random() < 0.85:
            kind = rng.random()
            text = rng.choice(TEXTS)
            if kind < 0.25:
                content = [{"type": "thinking", "thinking": rng.choice(THOUGHTS)}, {"type": "text", "text": text}]
            elif kind < 0.35:
                content = "<think>\n" + rng.choice(THOUGHTS) + "\n</think>\n\n" + text
            elif kind < 0.42:
                content = [{"type": "text", "text": text}]
            else:
                content = text
            msgs.append({"role": "assistant", "content": content})
    return msgs, tools


def to_cookbook(messages):
    out = []
    for m in messages:
        m = dict(m)
        if "tool_calls" in m:
            m["tool_calls"] = [ToolCall(type="function", id=c.get("id"), function=ToolCall.FunctionBody(**c["function"])) for c in m["tool_calls"]]
        out.append(m)
    return out


def flat(model_input):
    out = []
    for c in model_input.chunks:
        if hasattr(c, "tokens"):
            out.extend(int(t) for t in c.tokens)
        else:
            out.append({"image": int(c.expected_tokens)})
    return out


def err(e):
    return {"error": f"{type(e).__name__}: {e}"}


def attempt(f):
    try:
        return f()
    except Exception as e:  # the error is part of the answer: TS must refuse the same inputs
        return err(e)


def run_job(job):
    tok = tokenizer_of(job["tokenizer"])
    renderer = R.get_renderer(job["renderer"], tok)
    rng = random.Random(job["seed"])
    try:
        renderer.create_conversation_prefix_with_tools(TOOLS[:1], "")
        supports_tools = True
    except NotImplementedError:
        supports_tools = False
    cases = []
    parse_inputs = []
    for _ in range(job["n"]):
        conv, tools = gen_conversation(rng, renderer, supports_tools)
        system = conv[0]["content"] if conv and conv[0]["role"] == "system" else ""
        body = conv[1:] if conv and conv[0]["role"] == "system" else conv
        messages = (renderer.create_conversation_prefix_with_tools(tools, system) + to_cookbook(body)) if tools else to_cookbook(conv)
        case = {"messages": [message_to_jsonable(m) for m in messages]}
        prompt_msgs = messages[:-1] if messages and messages[-1]["role"] == "assistant" else messages
        case["prompt"] = attempt(lambda: flat(renderer.build_generation_prompt(prompt_msgs)))
        if job["renderer"] == "tml_v0" and rng.random() < 0.3:
            # tml_v0's reasoning effort (default 0.9) on the prompt and on a training example.
            case["effort"] = rng.choice([0.0, 0.25, 0.5, 0.123, 0.999, 0.0049, 0.755])
            case["prompt_effort"] = attempt(lambda: flat(renderer.build_generation_prompt(prompt_msgs, effort=case["effort"])))

            def with_effort():
                mi, w = renderer.build_supervised_example(messages, train_on_what=TrainOnWhat.ALL_ASSISTANT_MESSAGES, effort=case["effort"])
                return {"tokens": flat(mi), "weights": [float(x) for x in w]}

            case["supervised_effort"] = attempt(with_effort)
        if rng.random() < 0.2:
            case["prefill"] = rng.choice(["Sure", " ", "<think>\n"])
            case["prompt_prefill"] = attempt(lambda: flat(renderer.build_generation_prompt(prompt_msgs, prefill=case["prefill"])))
        sup = {}
        # Every conversation: the two modes training uses most; one of the other five in turn (each still sees
        # ~n/5 conversations), which halves the run time.
        others = [t for t in TRAIN_ON_WHAT if t not in ("last_assistant_message", "last_assistant_turn")]
        for tow in ["last_assistant_message", "last_assistant_turn", others[len(cases) % len(others)]]:
            ms = messages
            if tow == "customized":
                ms = [dict(m, trainable=rng.random() < 0.5) for m in messages]
                case["trainable"] = [m["trainable"] for m in ms]

            def one(ms=ms, tow=tow):
                mi, w = renderer.build_supervised_example(ms, train_on_what=TrainOnWhat(tow))
                return {"tokens": flat(mi), "weights": [float(x) for x in w]}

            sup[tow] = attempt(one)
        case["supervised"] = sup
        case["examples"] = attempt(lambda: [{"tokens": flat(mi), "weights": [float(x) for x in w]} for mi, w in renderer.build_supervised_examples(messages)])
        cases.append(case)
        # parse inputs: the last assistant output as rendered, cut short, doubled
        s = sup.get("last_assistant_message", {})
        if "tokens" in s and messages and messages[-1]["role"] == "assistant":
            out = [t for t, w in zip(s["tokens"], s["weights"]) if w > 0 and isinstance(t, int)]
            if out:
                parse_inputs.append(out)
                parse_inputs.append(out[:-1])
                parse_inputs.append(out[: max(1, len(out) // 2)])
    stops = renderer.get_stop_sequences()
    stop_ids = [s for s in stops if isinstance(s, int)]
    stop_texts = [s for s in stops if isinstance(s, str)]
    for text in TEXTS + [
        "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": 1.0}}\n</tool_call>",
        "<tool_call>\n{\"name\": 3}\n</tool_call>", "<tool_call>\nnot json\n</tool_call>",
        "<tool_call>\n{\"name\": \"f\", \"args\": {}}\n</tool_call>", "ok <tool_call>\n{\"name\": \"f\"",
        "<think>\nreason\n</think>\n\nanswer", "<think></think>empty", "a<think>x</think>b<think>y</think>c",
    ]:
        ids = tok.encode(text, add_special_tokens=False)
        for stop in stop_ids[:1]:
            parse_inputs.append(ids + [stop])
            parse_inputs.append(ids + [stop, stop])
        for st in stop_texts[:1]:
            parse_inputs.append(tok.encode(" " + text + st, add_special_tokens=False))
        if tok.eos_token_id is not None:
            parse_inputs.append(ids + [tok.eos_token_id])
        parse_inputs.append(ids)
    parses = []
    for ids in parse_inputs:
        def one(ids=ids):
            m, term = renderer.parse_response(list(ids))
            return {"message": message_to_jsonable(m), "termination": term.value}
        parses.append({"tokens": ids, "result": attempt(one)})
    return {"renderer": job["renderer"], "stop": stops, "cases": cases, "parses": parses,
            "has_extension_property": bool(renderer.has_extension_property)}


def model_info():
    """Every model of model_info.py with its recommended renderers and vision flag, and the Kimi/Llama tokenizer names."""
    from tinker_cookbook import model_info as mi
    from tinker_cookbook import tokenizer_utils as tu

    out = {}
    getters = [mi.get_llama_info, mi.get_qwen_info, mi.get_deepseek_info, mi.get_gpt_oss_info, mi.get_moonshot_info,
               mi.get_zai_info, mi.get_nvidia_info, mi.get_thinkingmachines_info]
    for g in getters:
        for version, attrs in g().items():
            name = f"{attrs.organization}/{version}"
            out[name] = {"recommended": list(mi.get_recommended_renderer_names(name)), "is_vl": attrs.is_vl,
                         "is_chat": attrs.is_chat, "tml": tu.is_tml_renderers_model(name)}
    return {"models": out, "kimi_revisions": tu._KIMI_TOKENIZER_REVISIONS}


def main():
    logging.disable(logging.WARNING)
    jobs = json.load(open(sys.argv[1]))["jobs"]
    out = []
    for job in jobs:
        try:
            out.append(run_job(job))
        except Exception:
            out.append({"renderer": job["renderer"], "fatal": traceback.format_exc()})
    json.dump({"results": out, "model_info": model_info()}, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
