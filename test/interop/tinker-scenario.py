"""The official Tinker SDK drives the local trainer (test/interop/tinker-python.test.ts runs this).

Usage: python tinker-scenario.py BASE_URL BASE_MODEL. Prints one JSON line of what it measured; exits
non-zero (with a traceback) when a step fails.
"""
import json
import sys

import tinker
from tinker import types

base_url, base_model = sys.argv[1], sys.argv[2]
out = {"sdk_version": tinker.__version__}


def datum(text):
    toks = list(text.encode())
    return types.Datum(
        model_input=types.ModelInput.from_ints(toks[:-1]),
        loss_fn_inputs={"target_tokens": toks[1:], "weights": [1.0] * (len(toks) - 1)},
    )


def ready(client_or_future):
    """SDK 0.38 returns futures of clients; older ones return clients."""
    result = getattr(client_or_future, "result", None)
    return result() if callable(result) else client_or_future


def batch_loss(tc, batch):
    return tc.forward(batch, "cross_entropy").result().metrics["loss:sum"]


sc = tinker.ServiceClient(base_url=base_url)
caps = sc.get_server_capabilities()
out["models"] = [m.model_name for m in caps.supported_models]

tc = ready(sc.create_lora_training_client(base_model=base_model, rank=8, seed=5))
out["model_id"] = tc.model_id
info = tc.get_info()
out["tokenizer_id"] = info.model_data.tokenizer_id

batch = [datum("Hello, world!\n"), datum("Hello there, tinker.\n")]
adam = types.AdamParams(learning_rate=0.1, beta1=0.9, beta2=0.95, eps=1e-8)
out["loss_before"] = batch_loss(tc, batch)
for _ in range(5):
    fb = tc.forward_backward(batch, "cross_entropy")
    step = tc.optim_step(adam)
    fb.result()
    step.result()
out["loss_after"] = batch_loss(tc, batch)

# Sample from an ephemeral snapshot, then train on the sample with importance_sampling.
sampler = ready(tc.save_weights_and_get_sampling_client())
prompt = list(b"Hello")
res = sampler.sample(
    prompt=types.ModelInput.from_ints(prompt),
    num_samples=2,
    sampling_params=types.SamplingParams(max_tokens=6, temperature=1.0, seed=9),
).result()
seq = res.sequences[0]
out["num_sequences"] = len(res.sequences)
out["sample_tokens"] = list(seq.tokens)
out["sample_logprobs"] = list(seq.logprobs)
full = prompt + list(seq.tokens)
n_prompt = len(prompt) - 1
is_datum = types.Datum(
    model_input=types.ModelInput.from_ints(full[:-1]),
    loss_fn_inputs={
        "target_tokens": full[1:],
        "logprobs": [0.0] * n_prompt + list(seq.logprobs),
        "advantages": [0.0] * n_prompt + [0.5] * len(seq.tokens),
    },
)
is_out = tc.forward_backward([is_datum], "importance_sampling").result()
out["is_loss"] = is_out.metrics["loss:sum"]
out["is_learner_logprobs"] = [float(x) for x in is_out.loss_fn_outputs[0]["logprobs"].tolist()[n_prompt:]]
# ppo through forward, with loss_fn_config: sampler logprobs lowered by 0.5 make every ratio e^0.5, clipped
# to clip_high_threshold, so the loss is -1.1 * sum(advantages).
ppo_datum = types.Datum(
    model_input=is_datum.model_input,
    loss_fn_inputs={
        "target_tokens": full[1:],
        "logprobs": [0.0] * n_prompt + [lp - 0.5 for lp in seq.logprobs],
        "advantages": [0.0] * n_prompt + [0.5] * len(seq.tokens),
    },
)
ppo_out = tc.forward([ppo_datum], "ppo", loss_fn_config={"clip_low_threshold": 0.9, "clip_high_threshold": 1.1}).result()
out["ppo_loss"] = ppo_out.metrics["loss:sum"]
tc.optim_step(adam).result()
out["prompt_logprobs"] = sampler.compute_logprobs(types.ModelInput.from_ints(full)).result()

# save_state / load_state round trip.
path = tc.save_state("py-ckpt").result().path
out["state_path"] = path
out["loss_at_save"] = batch_loss(tc, batch)
tc.forward_backward(batch, "cross_entropy").result()
tc.optim_step(adam).result()
out["loss_moved"] = batch_loss(tc, batch)
tc.load_state(path).result()
out["loss_after_load"] = batch_loss(tc, batch)
tc.load_state_with_optimizer(path).result()
out["loss_after_load_opt"] = batch_loss(tc, batch)

# The SDK's recommended resume path: a new training client from the checkpoint.
tc2 = ready(sc.create_training_client_from_state_with_optimizer(path))
out["loss_from_state"] = batch_loss(tc2, batch)

# Named sampler weights, opened through create_sampling_client.
sampler_path = tc.save_weights_for_sampler("py-sampler").result().path
out["sampler_path"] = sampler_path
s2 = ready(sc.create_sampling_client(model_path=sampler_path))
out["sampler_base_model"] = s2.get_base_model()
r2 = s2.sample(
    prompt=types.ModelInput.from_ints(prompt),
    num_samples=1,
    sampling_params=types.SamplingParams(max_tokens=3, seed=1),
).result()
out["sampler_tokens"] = list(r2.sequences[0].tokens)

# Bad input is a user error and the server keeps serving.
try:
    tc.forward_backward([types.Datum(model_input=types.ModelInput.from_ints([1, 2]), loss_fn_inputs={"target_tokens": [99999, 1], "weights": [1.0, 1.0]})], "cross_entropy").result()
    out["bad_input"] = "accepted"
except Exception as e:  # noqa: BLE001
    out["bad_input"] = type(e).__name__ + ": " + str(e)[:300]
out["loss_after_bad"] = batch_loss(tc, batch)

print(json.dumps(out), flush=True)
