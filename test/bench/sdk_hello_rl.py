"""A minimal synchronous RL loop over the official `tinker` SDK, on the hello task: the comparison arm of
test/bench/engine-side-by-side.ts (`--order ...,sdk`) where tinker-cookbook 0.6.1's own loop cannot drive SkyRL 0.4.0.

Run with SkyRL's own pinned SDK, tinker 0.25.0 (the Python of the provisioned SkyRL project,
<data>/engines/skyrl-0.4.0/.venv, the SDK SkyRL's CI drives its server with): tinker 0.38's SamplingClient cannot
sample from SkyRL 0.4.0, and tinker-cookbook 0.6.1 needs 0.38 (see docs/engine-side-by-side.md).

Per step, as tinker-cookbook's `do_sync_training` does it (and nothing else):
- every rollout of the batch sampled at once, one `sample` request each (num_samples=1, as the cookbook's env
  rollouts and the project's runners ask), temperature 1, max_tokens, stop at <|im_end|>;
- helloReward (agents/examples/hello-task.ts) on each answer; advantages = reward - the group's mean;
- one datum per rollout, built as the cookbook's `trajectory_to_data` builds it: model_input = (prompt +
  completion)[:-1], target_tokens = [1:], logprobs and advantages 0 on the prompt, the sampled logprobs and the
  advantage on the completion; `forward_backward(importance_sampling)` and `optim_step` (Adam 0.9 / 0.95 / 1e-8)
  sent together;
- `save_weights_and_get_sampling_client` for the next step's sampling (the cookbook's per-step sampler save).
The prompt is the cookbook's / the project's `qwen3` renderer's generation prompt for one user message
("<|im_start|>user\\n{prompt}<|im_end|>\\n<|im_start|>assistant\\n"); the bench checks that the engine received the
same prompt tokens from every arm. Prints `sdk-step <i> <seconds>` per step to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time

import tinker
from tinker import types


def hello_prompt(task: str) -> str:
    return f"Let's play a game. Say you are {task}."


def hello_reward(task: str, answer: str) -> float:
    text = answer.lower()
    if f"i am {task}" in text or f"i'm {task}" in text:
        return 1.0
    if f"not {task}" in text:
        return -1.0
    return 0.0


async def run(a: argparse.Namespace) -> None:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(a.tokenizer_dir)
    im_end = tok.convert_tokens_to_ids("<|im_end|>")

    def prompt_tokens(task: str) -> list[int]:
        text = f"<|im_start|>user\n{hello_prompt(task)}<|im_end|>\n<|im_start|>assistant\n"
        return tok.encode(text, add_special_tokens=False)

    def answer(tokens: list[int]) -> str:
        text = tok.decode([t for t in tokens if t != im_end], skip_special_tokens=False)
        return text.split("</think>", 1)[1] if "</think>" in text else text

    tasks = [t for t in a.tasks.split(",") if t]
    steps = len(tasks) // a.batch_size

    service = tinker.ServiceClient(base_url=a.base_url)
    training = await service.create_lora_training_client_async(a.model, rank=a.lora_rank)
    sampler = await training.save_weights_and_get_sampling_client_async()
    params = types.SamplingParams(max_tokens=a.max_tokens, temperature=1.0, top_k=-1, top_p=1.0, stop=[im_end])
    adam = types.AdamParams(learning_rate=a.lr, beta1=0.9, beta2=0.95, eps=1e-8)

    for step in range(steps):
        started = time.monotonic()
        batch = tasks[step * a.batch_size : (step + 1) * a.batch_size]
        prompts = [prompt_tokens(t) for t in batch]
        results = await asyncio.gather(
            *(
                sampler.sample_async(prompt=types.ModelInput.from_ints(p), num_samples=1, sampling_params=params)
                for p in prompts
                for _ in range(a.group_size)
            )
        )
        data: list[types.Datum] = []
        rewards_all: list[float] = []
        for i, task in enumerate(batch):
            seqs = [results[i * a.group_size + j].sequences[0] for j in range(a.group_size)]
            rewards = [hello_reward(task, answer(list(s.tokens))) for s in seqs]
            rewards_all += rewards
            centre = sum(rewards) / len(rewards)
            prompt = prompts[i]
            for s, r in zip(seqs, rewards):
                completion = list(s.tokens)
                tokens = prompt + completion
                n = len(tokens) - 1
                pad = len(prompt) - 1
                logprobs = [0.0] * pad + [float(x) for x in (s.logprobs or [0.0] * len(completion))]
                adv = [0.0] * pad + [r - centre] * len(completion)
                data.append(
                    types.Datum(
                        model_input=types.ModelInput.from_ints(tokens[:-1]),
                        loss_fn_inputs={
                            "target_tokens": types.TensorData(data=tokens[1:], dtype="int64", shape=[n]),
                            "logprobs": types.TensorData(data=logprobs, dtype="float32", shape=[n]),
                            "advantages": types.TensorData(data=adv, dtype="float32", shape=[n]),
                        },
                    )
                )
        fb = await training.forward_backward_async(data, loss_fn=a.loss)
        opt = await training.optim_step_async(adam)
        await fb.result_async()
        await opt.result_async()
        sampler = await training.save_weights_and_get_sampling_client_async()
        mean = sum(rewards_all) / len(rewards_all)
        print(f"sdk-step {step} {time.monotonic() - started:.3f} reward={mean:.3f}", file=sys.stderr, flush=True)
    # The final save, as the cookbook's loop ends (state and sampler weights).
    await (await training.save_state_async("final")).result_async()
    await (await training.save_weights_for_sampler_async("final")).result_async()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--base-url", required=True)
    p.add_argument("--tokenizer-dir", required=True)
    p.add_argument("--log-path", required=True)
    p.add_argument("--model", default="Qwen/Qwen3-8B")
    p.add_argument("--tasks", required=True)
    p.add_argument("--batch-size", type=int, required=True)
    p.add_argument("--group-size", type=int, required=True)
    p.add_argument("--lr", type=float, required=True)
    p.add_argument("--max-tokens", type=int, required=True)
    p.add_argument("--lora-rank", type=int, required=True)
    p.add_argument("--renderer", required=True)
    p.add_argument("--loss", default="importance_sampling")
    a = p.parse_args()
    if a.renderer != "qwen3":
        raise SystemExit(f"sdk_hello_rl.py builds the qwen3 renderer's prompt only, not {a.renderer!r}")
    os.environ.setdefault("TINKER_API_KEY", "tml-dummy")
    asyncio.run(run(a))


if __name__ == "__main__":
    main()
