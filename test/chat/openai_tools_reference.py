"""Generation prompts of OpenAI-shaped chat requests as tinker-cookbook 0.6.1's OpenAI layer renders them, for
test/chat/openai-tools-parity.test.ts: messages through openai_compat.openai_messages_to_tinker, tools through
openai_compat.openai_tools_to_tinker and declared by the renderer's create_conversation_prefix_with_tools with the
leading system message's text (third_party/litellm/provider.py's _sample_chat_completion and
_prepare_messages_with_tools, copied below: that module imports litellm, which the venv does not have).

Input (JSON file, argv[1]): {"jobs": [{"renderer", "tokenizer": spec as test/chat/parity/cookbook_parity.py takes}],
"cases": [{"messages": [OpenAI message], "tools": [OpenAI tool]}]}. Output (JSON file, argv[2]): per job
{"renderer", "prompts": [[token ids] or {"error"} per case]} or {"renderer", "fatal"}.
"""

import json
import os
import sys
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "parity"))

from cookbook_parity import tokenizer_of  # noqa: E402

from tinker_cookbook import renderers as R  # noqa: E402
from tinker_cookbook.third_party.openai_compat import openai_messages_to_tinker, openai_tools_to_tinker  # noqa: E402


def prepare_messages_with_tools(renderer, messages, tools):
    """litellm/provider.py's _prepare_messages_with_tools, as tinker-cookbook 0.6.1 has it."""
    tool_specs = openai_tools_to_tinker(tools)
    system_prompt = ""
    if messages and messages[0]["role"] == "system":
        content = messages[0].get("content") or ""
        system_prompt = content if isinstance(content, str) else ""
        remaining = list(messages[1:])
    else:
        remaining = list(messages)
    prefix = renderer.create_conversation_prefix_with_tools(tool_specs, system_prompt)
    return prefix + remaining


def prompt_of(renderer, case):
    messages = openai_messages_to_tinker(case["messages"])
    if case["tools"]:
        messages = prepare_messages_with_tools(renderer, messages, case["tools"])
    return renderer.build_generation_prompt(messages).to_ints()


def run_job(job, cases, tokenizers):
    key = json.dumps(job["tokenizer"], sort_keys=True)
    if key not in tokenizers:
        tokenizers[key] = tokenizer_of(job["tokenizer"])
    renderer = R.get_renderer(job["renderer"], tokenizers[key])
    prompts = []
    for case in cases:
        try:
            prompts.append(prompt_of(renderer, case))
        except Exception as e:  # the renderer refuses (no tool format, ...): compared as "both refuse"
            prompts.append({"error": f"{type(e).__name__}: {e}"})
    return {"renderer": job["renderer"], "prompts": prompts}


def main():
    spec = json.load(open(sys.argv[1], encoding="utf-8"))
    tokenizers = {}
    out = []
    for job in spec["jobs"]:
        try:
            out.append(run_job(job, spec["cases"], tokenizers))
        except Exception:
            out.append({"renderer": job["renderer"], "fatal": traceback.format_exc()})
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
