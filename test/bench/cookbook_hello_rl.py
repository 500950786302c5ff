"""The hello task as a tinker-cookbook 0.6.1 RL environment, trained by the cookbook's own loop.

Run by test/bench/engine-side-by-side.ts (`npm run bench -- engine-side-by-side`) against the same Tinker-API server
(SkyRL) that the project's durable loop trains on, with the same config. Nothing of the loop is ours: this file only
defines the task (Env / EnvGroupBuilder / RLDataset / RLDatasetBuilder, as the cookbook's recipes do) and calls
`tinker_cookbook.rl.train.main`, which runs `do_sync_training` (neither async_config nor stream_minibatch_config set).

The task and its reward are agents/examples/hello-task.ts's: the user asks "Let's play a game. Say you are N.", the
reward is 1 for "i am N" / "i'm N" in the lower-cased answer, -1 for "not N", else 0.

What is not the cookbook's defaults, and why:
- the tokenizer of the served name (Qwen/Qwen3-8B) comes from the tiny Qwen3's directory, registered with the
  cookbook's own `register_tokenizer` (no hub on this machine; SkyRL serves that directory under that name);
- eval_every=0 and save_every=0 (no evals, no periodic checkpoints: the same as the durable arm's config, which
  sets evalEvery 0 and saveEvery 0); only the final checkpoint is saved, by both.

Prints one line per step to stderr: `cookbook-step <i> <seconds>` (the wall time of the loop's iteration, measured
around the cookbook's own per-step metrics logging), and the cookbook writes <log_path>/metrics.jsonl.

    python test/bench/cookbook_hello_rl.py --base-url http://127.0.0.1:PORT --tokenizer-dir DIR --log-path DIR \
        --tasks 0,1,2,3,... --batch-size 4 --group-size 4 --lr 1e-3 --max-tokens 12 --lora-rank 8 \
        --renderer qwen3 --loss importance_sampling
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import time
from collections.abc import Sequence

import chz
import tinker

from tinker_cookbook import renderers
from tinker_cookbook.renderers import get_text_content
from tinker_cookbook.rl import train
from tinker_cookbook.rl.types import Env, EnvGroupBuilder, RLDataset, RLDatasetBuilder, StepResult
from tinker_cookbook.tokenizer_utils import get_tokenizer, register_tokenizer
from tinker_cookbook.utils import ml_log


def hello_prompt(task: str) -> str:
    return f"Let's play a game. Say you are {task}."


def hello_reward(task: str, answer: str) -> float:
    text = answer.lower()
    if f"i am {task}" in text or f"i'm {task}" in text:
        return 1.0
    if f"not {task}" in text:
        return -1.0
    return 0.0


class HelloEnv(Env):
    """One question, one answer, the episode ends."""

    def __init__(self, task: str, renderer: renderers.Renderer):
        self.task = task
        self.renderer = renderer

    async def initial_observation(self):
        prompt = self.renderer.build_generation_prompt([{"role": "user", "content": hello_prompt(self.task)}])
        return prompt, self.renderer.get_stop_sequences()

    async def step(self, action, *, extra=None) -> StepResult:
        message, _ = self.renderer.parse_response(action)
        reward = hello_reward(self.task, get_text_content(message))
        return StepResult(
            reward=reward,
            episode_done=True,
            next_observation=tinker.ModelInput.empty(),
            next_stop_condition=self.renderer.get_stop_sequences(),
            metrics={"reward/hello": reward},
        )


class HelloGroupBuilder(EnvGroupBuilder):
    def __init__(self, task: str, group_size: int, renderer_name: str, model_name: str):
        self.task = task
        self.group_size = group_size
        self.renderer_name = renderer_name
        self.model_name = model_name

    async def make_envs(self) -> Sequence[Env]:
        renderer = renderers.get_renderer(self.renderer_name, get_tokenizer(self.model_name), model_name=self.model_name)
        return [HelloEnv(self.task, renderer) for _ in range(self.group_size)]

    def logging_tags(self) -> list[str]:
        return ["hello"]


class HelloDataset(RLDataset):
    """Batches of `batch_size` tasks in the order given, one group of `group_size` rollouts each."""

    def __init__(self, tasks: list[str], batch_size: int, group_size: int, renderer_name: str, model_name: str):
        self.tasks = tasks
        self.batch_size = batch_size
        self.group_size = group_size
        self.renderer_name = renderer_name
        self.model_name = model_name

    def get_batch(self, index: int) -> Sequence[EnvGroupBuilder]:
        chunk = self.tasks[index * self.batch_size : (index + 1) * self.batch_size]
        return [HelloGroupBuilder(t, self.group_size, self.renderer_name, self.model_name) for t in chunk]

    def __len__(self) -> int:
        return len(self.tasks) // self.batch_size


@chz.chz
class HelloDatasetBuilder(RLDatasetBuilder):
    tasks: tuple[str, ...]
    batch_size: int
    group_size: int
    renderer_name: str
    model_name: str

    async def __call__(self) -> tuple[RLDataset, RLDataset | None]:
        return HelloDataset(list(self.tasks), self.batch_size, self.group_size, self.renderer_name, self.model_name), None


def timed_logger(logger: ml_log.Logger) -> ml_log.Logger:
    """Prints each training step's wall time (between the loop's per-step metrics rows) to stderr."""
    original = logger.log_metrics
    last = [time.monotonic()]

    def log_metrics(metrics, step=None, *args, **kwargs):
        now = time.monotonic()
        if step is not None and "progress/batch" in metrics:
            print(f"cookbook-step {step} {now - last[0]:.3f} time/total={metrics.get('time/total')}", file=sys.stderr, flush=True)
            last[0] = now
        return original(metrics, step, *args, **kwargs)

    logger.log_metrics = log_metrics  # type: ignore[method-assign]
    return logger


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
    os.environ.setdefault("TINKER_API_KEY", "tml-dummy")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")

    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(a.tokenizer_dir)
    register_tokenizer(a.model, lambda: tok)

    # Per-step wall time, printed from the loop's own metrics calls (the loop itself is untouched).
    setup = ml_log.setup_logging
    ml_log.setup_logging = lambda *args, **kw: timed_logger(setup(*args, **kw))  # type: ignore[assignment]

    tasks = tuple(t for t in a.tasks.split(",") if t)
    config = train.Config(
        learning_rate=a.lr,
        dataset_builder=HelloDatasetBuilder(
            tasks=tasks, batch_size=a.batch_size, group_size=a.group_size, renderer_name=a.renderer, model_name=a.model
        ),
        model_name=a.model,
        recipe_name="agl_engine_side_by_side",
        max_tokens=a.max_tokens,
        log_path=a.log_path,
        base_url=a.base_url,
        renderer_name=a.renderer,
        lora_rank=a.lora_rank,
        loss_fn=a.loss,
        eval_every=0,
        save_every=0,
    )
    asyncio.run(train.main(config))


if __name__ == "__main__":
    main()
