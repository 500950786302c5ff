"""Reference encodings for test/chat/pretokenizer-classes.test.ts, made by the tokenizers the models' own Python
stacks use, from the same files our TypeScript tokenizers read:

  {"kind": "hf", "file": tokenizer.json}        HF `tokenizers` (Rust; its Split regexes run in Oniguruma),
                                                encode(text, add_special_tokens=False), and the pieces of
                                                pre_tokenizer.pre_tokenize_str(text) as code point offsets
  {"kind": "tiktoken", "dir": d, "pattern": p}  tiktoken (Rust; fancy-regex) over d/tiktoken.model with split
                                                pattern p, encode_ordinary (Kimi's TikTokenTokenizer)
  {"kind": "tml", "name": model, "libs": [...]} tml-renderers 0.2.1's o200k_base_chat through the cookbook's
                                                adapter, encode_ordinary (libtorch loaded first, as
                                                test/chat/parity/cookbook_parity.py does)

Input (JSON file, argv[1]): {"tokenizers": {key: spec}, "texts": [str]}. Output (JSON file, argv[2]):
{key: {"ids": [[ids] per text], "pieces": [[[start, end] per piece] per text] or null}}.
"""

import base64
import json
import os
import sys


def hf(spec):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(spec["file"])
    return lambda texts: {
        "ids": [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)],
        "pieces": [[list(span) for _, span in tok.pre_tokenizer.pre_tokenize_str(t)] for t in texts],
    }


def tiktoken_dir(spec):
    import tiktoken

    ranks = {}
    with open(os.path.join(spec["dir"], "tiktoken.model")) as f:
        for line in f:
            if line.strip():
                token, rank = line.split()
                ranks[base64.b64decode(token)] = int(rank)
    enc = tiktoken.Encoding(name="reference", pat_str=spec["pattern"], mergeable_ranks=ranks, special_tokens={})
    return lambda texts: {"ids": [enc.encode_ordinary(t) for t in texts], "pieces": None}


def tml(spec):
    import ctypes

    for lib in spec["libs"]:
        ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
    from tinker_cookbook import tokenizer_utils
    from tinker_cookbook.renderers import tml_renderers_adapter

    tml_renderers_adapter._validate_torch_version = lambda: None
    tok = tokenizer_utils.get_tokenizer(spec["name"])
    return lambda texts: {"ids": [tokenizer_utils.encode_without_special_tokens(tok, t) for t in texts], "pieces": None}


def main():
    job = json.load(open(sys.argv[1], encoding="utf-8"))
    makers = {"hf": hf, "tiktoken": tiktoken_dir, "tml": tml}
    out = {key: makers[spec["kind"]](spec)(job["texts"]) for key, spec in job["tokenizers"].items()}
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
