"""The official Tinker SDK through a fault-injecting proxy (test/interop/tinker-retry-parity.test.ts runs this and
the same steps with our client). Usage: python tinker-retry-scenario.py BASE_URL BASE_MODEL. Prints one JSON line:
which steps succeeded."""
import json
import sys

import tinker
from tinker import types

base_url, base_model = sys.argv[1], sys.argv[2]
out = {}


def step(name, fn):
    try:
        fn()
        out[name] = "ok"
    except Exception as e:  # noqa: BLE001
        out[name] = f"{type(e).__name__}: {str(e)[:200]}"


def datum(text):
    toks = list(text.encode())
    return types.Datum(
        model_input=types.ModelInput.from_ints(toks[:-1]),
        loss_fn_inputs={"target_tokens": toks[1:], "weights": [1.0] * (len(toks) - 1)},
    )


sc = tinker.ServiceClient(base_url=base_url)
tc = sc.create_lora_training_client(base_model=base_model, rank=4, seed=1).result()
batch = [datum("Hello, world!\n")]


def train():
    fb = tc.forward_backward(batch, "cross_entropy")
    opt = tc.optim_step(types.AdamParams(learning_rate=0.01))
    fb.result()
    opt.result()


def sample():
    sampler = tc.save_weights_and_get_sampling_client().result()
    sampler.sample(prompt=types.ModelInput.from_ints(list(b"Hi")), num_samples=1, sampling_params=types.SamplingParams(max_tokens=2, seed=3)).result()


step("train", train)
step("sample", sample)
step("sampler_refused", lambda: sc.create_sampling_client(base_model=base_model).result())
step("sampler_retried", lambda: sc.create_sampling_client(base_model=base_model).result())
step("rejected", lambda: tc.forward([types.Datum(model_input=types.ModelInput.from_ints([1, 2]), loss_fn_inputs={"target_tokens": [99999, 1], "weights": [1.0, 1.0]})], "cross_entropy").result())
step("after_rejected", lambda: tc.forward(batch, "cross_entropy").result())
step("close", lambda: sc.close("success").result())
print(json.dumps(out), flush=True)
