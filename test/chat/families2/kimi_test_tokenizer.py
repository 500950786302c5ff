"""Kimi's tokenizer as its TikTokenTokenizer (tokenization_kimi.py) loads it, for tests that run tinker-cookbook
on the test tokenizer files of test/helpers/test-tokenizers.ts: tiktoken with Kimi's split pattern, ranks from
tiktoken.model, 258 special ids after the last rank named by tokenizer_config.json's added_tokens_decoder (others
<|reserved_token_N|>), every special allowed in encode. Only the surface the cookbook's Kimi renderers use.
"""
import base64
import json
import os

import tiktoken

KIMI_PATTERN = "|".join([
    r"""[\p{Han}]+""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])


def _runs(s, limit):
    """Pieces of s in which no run of whitespace (or of non-whitespace) is longer than limit."""
    start, run = 0, 0
    space = s[0].isspace() if s else False
    for i, ch in enumerate(s):
        if ch.isspace() != space:
            space, run = ch.isspace(), 1
        else:
            run += 1
            if run > limit:
                yield s[start:i]
                start, run = i, 1
    yield s[start:]


class KimiTestTokenizer:
    """The surface the Kimi renderers use: encode(text[, add_special_tokens]) and decode(ids)."""

    def __init__(self, directory):
        ranks = {}
        with open(os.path.join(directory, "tiktoken.model")) as f:
            for line in f:
                if line.strip():
                    token, rank = line.split()
                    ranks[base64.b64decode(token)] = int(rank)
        config = json.load(open(os.path.join(directory, "tokenizer_config.json")))
        named = {int(k): v["content"] for k, v in config["added_tokens_decoder"].items()}
        n = len(ranks)
        specials = {named.get(i, f"<|reserved_token_{i}|>"): i for i in range(n, n + 258)}
        self.model = tiktoken.Encoding(name="kimi-test", pat_str=KIMI_PATTERN, mergeable_ranks=ranks, special_tokens=specials)
        self.name_or_path = directory

    def encode(self, text, **kwargs):
        # Kimi's encode allows every special token (its add_special_tokens=False path splits on the same tokens),
        # after cutting the text into 400,000-character pieces and where a run of whitespace or of non-whitespace
        # passes 25,000 characters.
        out = []
        for i in range(0, len(text), 400_000):
            for piece in _runs(text[i : i + 400_000], 25_000):
                out.extend(self.model.encode(piece, allowed_special="all"))
        return out

    def decode(self, ids, **kwargs):
        return self.model.decode(list(ids))

    @property
    def eos_token_id(self):
        return self.model._special_tokens.get("[EOS]")
