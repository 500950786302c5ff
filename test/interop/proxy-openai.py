"""The Python `openai` package calls the agl-temporal proxy: plain and rollout-scoped, streamed and not.
Usage: proxy-openai.py PLAIN_BASE_URL SCOPED_BASE_URL ; prints one JSON line with what it saw."""
import json
import sys

import openai
from openai import OpenAI

plain_url, scoped_url = sys.argv[1], sys.argv[2]
messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello."}]
out = {"openai_version": openai.__version__}

plain = OpenAI(base_url=plain_url, api_key="unused", max_retries=0)
out["models"] = [m.id for m in plain.models.list().data]
r = plain.chat.completions.create(model="local/bigram", messages=messages, temperature=0.0, top_p=1.0, max_tokens=12, n=2,
                                  extra_body={"top_k": 5})
d = r.to_dict()
out["plain"] = {"id": d["id"], "n": len(d["choices"]), "prompt_token_ids": d["prompt_token_ids"],
                "token_ids": [c["token_ids"] for c in d["choices"]],
                "logprobs": [[e["logprob"] for e in c["logprobs"]["content"]] for c in d["choices"]],
                "content": r.choices[0].message.content, "finish_reason": r.choices[0].finish_reason}

scoped = OpenAI(base_url=scoped_url, api_key="unused", max_retries=0)
r2 = scoped.chat.completions.create(model="local/bigram", messages=messages, max_completion_tokens=10, seed=1)
out["scoped"] = {"id": r2.id, "token_ids": r2.to_dict()["choices"][0]["token_ids"]}

chunks = [c.to_dict() for c in scoped.chat.completions.create(model="local/bigram", messages=messages, max_tokens=10, stream=True,
                                                              stream_options={"include_usage": True})]
last = chunks[-1]
out["stream"] = {"chunks": len(chunks), "text": "".join((ch.get("delta") or {}).get("content") or "" for c in chunks for ch in c["choices"]),
                 "prompt_token_ids": last.get("prompt_token_ids"), "token_ids": last["choices"][0].get("token_ids"),
                 "logprobs": len(last["choices"][0]["logprobs"]["content"]), "usage": last.get("usage")}
plain_chunks = [c.to_dict() for c in plain.chat.completions.create(model="local/bigram", messages=messages, max_tokens=8, stream=True)]
out["plain_stream"] = {"chunks": len(plain_chunks), "token_ids": plain_chunks[-1]["choices"][0].get("token_ids"),
                       "prompt_token_ids": plain_chunks[-1].get("prompt_token_ids")}
try:
    plain.chat.completions.create(model="local/bigram", messages=messages, n=0)
    out["bad_request"] = None
except openai.BadRequestError as e:
    out["bad_request"] = {"status": e.status_code, "message": str(e)}
print(json.dumps(out))
