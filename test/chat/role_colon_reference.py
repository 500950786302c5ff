"""tinker-cookbook 0.6.1's role_colon on conversations with tools and tool calls (test/chat/role-colon-parity.test.ts).

Input (JSON file, argv[1]): {"tokenizer": {...as cookbook_parity.py takes it}, "conversations": [[message, ...]],
"tools": [[tool spec, ...]], "parses": [text]}. Output (argv[2]): per conversation the generation prompt and the
supervised tokens and weights for two TrainOnWhat values; per tools list the prefix messages or the error; per text
the parse of its tokens.
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "parity"))

from cookbook_parity import attempt, flat, to_cookbook, tokenizer_of  # noqa: E402
from tinker_cookbook import renderers as R  # noqa: E402
from tinker_cookbook.renderers.base import TrainOnWhat, message_to_jsonable  # noqa: E402


def main():
    job = json.load(open(sys.argv[1]))
    tok = tokenizer_of(job["tokenizer"])
    renderer = R.get_renderer("role_colon", tok)

    def supervised(msgs, tow):
        mi, w = renderer.build_supervised_example(msgs, train_on_what=TrainOnWhat(tow))
        return {"tokens": flat(mi), "weights": [float(x) for x in w]}

    cases = []
    for conv in job["conversations"]:
        msgs = to_cookbook(conv)
        prompt_msgs = msgs[:-1] if msgs and msgs[-1]["role"] == "assistant" else msgs
        cases.append({
            "prompt": attempt(lambda: flat(renderer.build_generation_prompt(prompt_msgs))),
            "last": attempt(lambda: supervised(msgs, "last_assistant_message")),
            "all": attempt(lambda: supervised(msgs, "all_assistant_messages")),
        })
    prefixes = [attempt(lambda: [message_to_jsonable(m) for m in renderer.create_conversation_prefix_with_tools(t, "")]) for t in job["tools"]]
    parses = []
    for text in job["parses"]:
        m, term = renderer.parse_response(tok.encode(text, add_special_tokens=False))
        parses.append({"message": message_to_jsonable(m), "termination": term.value})
    json.dump({"cases": cases, "prefixes": prefixes, "parses": parses}, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
