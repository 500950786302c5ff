"""Expected results for test/chat/families2/*.test.ts, computed by tinker-cookbook 0.6.1 itself.

For every renderer name of the Kimi K2 / K2.5 / K2.6, GLM-5.3 and Nemotron 3 families and every conversation
of corpus.json: build_generation_prompt before each assistant message and after the last one, then
build_supervised_example and build_supervised_examples for every TrainOnWhat (or the error the cookbook
raises), the stop sequences, create_conversation_prefix_with_tools, and parse_response of the responses in
corpus.json (encoded with the family's tokenizer, with and without the stop token, and without the
prefilled <think>). Nothing here is computed by hand: the cookbook renders, this script records.

The tokenizers are the test tokenizers of test/helpers/test-tokenizers.ts (built from the Qwen3 vocabulary
with each family's special tokens; no package ships the real ones). The Kimi one is loaded as Kimi's
TikTokenTokenizer loads its files: tiktoken with Kimi's split pattern, specials numbered after the ranks,
every special allowed in encode.

Run (from the repository root):
  node --import tsx test/helpers/test-tokenizers.ts .data/test-tokenizers
  PYTHON -m pip install tinker-cookbook==0.6.1 --no-deps  (+ tinker torch pillow pydantic tiktoken tokenizers transformers)
  PYTHON test/chat/families2/make_fixtures.py .data/test-tokenizers | gzip -9n > test/chat/families2/expected.json.gz
"""
import json
import logging
import os
import sys
import warnings

from kimi_test_tokenizer import KimiTestTokenizer
from tinker_cookbook import renderers
from tinker_cookbook.renderers import ToolCall, TrainOnWhat

warnings.simplefilter("ignore")
logging.disable(logging.WARNING)
HERE = os.path.dirname(os.path.abspath(__file__))

def hf_tokenizer(directory):
    from transformers import PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast(tokenizer_file=os.path.join(directory, "tokenizer.json"), clean_up_tokenization_spaces=False)
    tok.name_or_path = directory
    return tok


FAMILIES = {
    "kimi": ["kimi_k2", "kimi_k25", "kimi_k25_disable_thinking", "kimi_k26", "kimi_k26_disable_thinking", "kimi_k26_preserve_thinking"],
    "glm5": ["glm5_3_max_reasoning", "glm5_3_high_reasoning", "glm5_3_low_reasoning"],
    "nemotron3": [
        "nemotron3", "nemotron3_low_thinking", "nemotron3_disable_thinking", "nemotron3_preserve_thinking",
        "nemotron3_ultra", "nemotron3_ultra_disable_thinking", "nemotron3_ultra_medium_thinking", "nemotron3_ultra_preserve_thinking",
    ],
}


class StubImageProcessor:
    """Stands in for the vision processor: every image takes 7 tokens (the real count is the vision code's)."""

    merge_size = 1
    patch_size = 1

    def get_number_of_image_patches(self, height, width, images_kwargs=None):
        return 7


def chunks_json(model_input):
    return [{"tokens": list(c.tokens)} if hasattr(c, "tokens") else {"image": c.expected_tokens} for c in model_input.chunks]


def to_cookbook(m):
    m = dict(m)
    if "tool_calls" in m:
        m["tool_calls"] = [ToolCall.model_validate(tc) for tc in m["tool_calls"]]
    return m


def message_json(m):
    out = {"role": m["role"], "content": m["content"]}
    if "tool_calls" in m:
        out["tool_calls"] = [tc.model_dump(mode="json", exclude_none=True) for tc in m["tool_calls"]]
    if "unparsed_tool_calls" in m:
        out["unparsed_tool_calls"] = [tc.model_dump(mode="json") for tc in m["unparsed_tool_calls"]]
    for k in ("tool_call_id", "name", "trainable"):
        if k in m:
            out[k] = m[k]
    return out


def rle(weights):
    """Weights as [value, count] runs (the fixture stays small)."""
    out = []
    for w in weights:
        w = float(w)
        if out and out[-1][0] == w:
            out[-1][1] += 1
        else:
            out.append([w, 1])
    return out


def ints(model_input):
    return [t for c in model_input.chunks for t in c.tokens]


def attempt(f):
    try:
        return f()
    except Exception as e:  # the error the cookbook raises is part of what is checked
        return {"error": type(e).__name__, "message": str(e)[:300]}


def conversation_messages(renderer, conv, tools):
    msgs = [to_cookbook(m) for m in conv["messages"]]
    if "trainable" in conv:
        for m, t in zip(msgs, conv["trainable"]):
            m["trainable"] = t
    if conv.get("tools"):
        msgs = renderer.create_conversation_prefix_with_tools(tools, conv.get("system", "")) + msgs
    elif conv.get("system"):
        msgs = [{"role": "system", "content": conv["system"]}] + msgs
    return msgs


def main():
    tokdir = sys.argv[1]
    corpus = json.load(open(os.path.join(HERE, "corpus.json")))
    tools = corpus["tools"]
    out = {}
    for family, names in FAMILIES.items():
        directory = os.path.join(tokdir, family)
        tok = KimiTestTokenizer(directory) if family == "kimi" else hf_tokenizer(directory)
        encode = (lambda s: tok.encode(s)) if family == "kimi" else (lambda s: tok.encode(s, add_special_tokens=False))
        for name in names:
            r = renderers.get_renderer(name, tok, image_processor=StubImageProcessor())
            rec = {"stop": list(r.get_stop_sequences()), "extension": r.has_extension_property, "conversations": {}, "responses": []}
            rec["prefix"] = {
                "with_system": attempt(lambda: [message_json(m) for m in r.create_conversation_prefix_with_tools(tools, "Be brief.")]),
                "without_system": attempt(lambda: [message_json(m) for m in r.create_conversation_prefix_with_tools(tools)]),
            }
            for conv in corpus["conversations"]:
                msgs = conversation_messages(r, conv, tools)
                c = {"messages": [message_json(m) for m in msgs]}
                base = [{k: v for k, v in m.items() if k != "trainable"} for m in msgs]
                cuts = [i for i, m in enumerate(base) if m["role"] == "assistant"] + [len(base)]
                c["prompts"] = [{"at": i, **attempt(lambda i=i: {"tokens": ints(r.build_generation_prompt(base[:i]))})} for i in cuts]
                sup = {}
                for mode in TrainOnWhat:
                    if (mode == TrainOnWhat.CUSTOMIZED) != ("trainable" in conv):
                        continue

                    def one(mode=mode):
                        mi, w = r.build_supervised_example(msgs, train_on_what=mode)
                        return {"tokens": ints(mi), "weights": rle(w.tolist())}

                    def many(mode=mode):
                        return [{"tokens": ints(mi), "weights": rle(w.tolist())} for mi, w in r.build_supervised_examples(msgs, train_on_what=mode)]

                    sup[mode.value] = {"example": attempt(one), "examples": attempt(many)}
                c["supervised"] = sup
                rec["conversations"][conv["id"]] = c
            rec["images"] = {}
            for conv in corpus["image_conversations"]:
                msgs = [to_cookbook(m) for m in conv["messages"]]
                cuts = [i for i, m in enumerate(msgs) if m["role"] == "assistant"]
                im = {"prompts": [{"at": i, **attempt(lambda i=i: {"chunks": chunks_json(r.build_generation_prompt(msgs[:i]))})} for i in cuts]}
                for mode in (TrainOnWhat.LAST_ASSISTANT_MESSAGE, TrainOnWhat.ALL_ASSISTANT_MESSAGES):

                    def one(mode=mode):
                        mi, w = r.build_supervised_example(msgs, train_on_what=mode)
                        return {"chunks": chunks_json(mi), "weights": rle(w.tolist())}

                    im[mode.value] = attempt(one)
                rec["images"][conv["id"]] = im
            stop = rec["stop"]
            for resp in corpus["responses"]:
                body = encode(resp["text"])
                variants = {"stop": body + [stop[0]], "no_stop": body}
                if family == "glm5":
                    variants["eos"] = body + [stop[2]]
                prefill = "<think>\n" if family == "nemotron3" else "<think>"
                if resp["text"].startswith(prefill):
                    variants["prefilled"] = encode(resp["text"][len(prefill):]) + [stop[0]]
                for variant, tokens in variants.items():
                    res = attempt(lambda: r.parse_response(tokens))
                    entry = {"id": resp["id"], "variant": variant, "tokens": tokens}
                    if isinstance(res, dict):
                        entry.update(res)
                    else:
                        entry["message"] = message_json(res[0])
                        entry["termination"] = res[1].value
                    rec["responses"].append(entry)
            out[name] = rec
    toks = {}
    for family in FAMILIES:
        directory = os.path.join(tokdir, family)
        tok = KimiTestTokenizer(directory) if family == "kimi" else hf_tokenizer(directory)
        encode = (lambda s: tok.encode(s)) if family == "kimi" else (lambda s: tok.encode(s, add_special_tokens=False))
        ids = [encode(t) for t in corpus["texts"]]
        # every prefix of the ids decoded: cut UTF-8 sequences become U+FFFD as the tokenizer decodes them
        prefixes = [[tok.decode(i[:k]) for k in range(len(i) + 1)] if len(i) < 200 else [] for i in ids]
        toks[family] = {"ids": ids, "decoded": [tok.decode(i) for i in ids], "decoded_prefixes": prefixes}
    json.dump({"renderers": out, "tokenizers": toks}, sys.stdout, ensure_ascii=False, separators=(",", ":"))


if __name__ == "__main__":
    main()
