"""The wire-parity scenario, official SDK side (test/interop/tinker-wire-parity.test.ts runs it, and the same steps
with our client, through a recording proxy). Usage: python tinker-wire-scenario.py BASE_URL BASE_MODEL.
Prints one JSON line of results."""
import json
import sys

import tinker
from tinker import types

base_url, base_model = sys.argv[1], sys.argv[2]
out = {}


def datum(text):
    toks = list(text.encode())
    return types.Datum(
        model_input=types.ModelInput.from_ints(toks[:-1]),
        loss_fn_inputs={"target_tokens": toks[1:], "weights": [1.0] * (len(toks) - 1)},
    )


batch = [datum("Hello, world!\n"), datum("Hello there, tinker.\n"), datum("One more line.\n")]
prompt = types.ModelInput.from_ints(list(b"Hello"))

sc = tinker.ServiceClient(base_url=base_url)
tc = sc.create_lora_training_client(base_model=base_model, rank=8, seed=3).result()
fb = tc.forward_backward(batch, "cross_entropy")
opt = tc.optim_step(types.AdamParams(learning_rate=0.01, beta1=0.9, beta2=0.95, eps=1e-8))
out["loss"] = fb.result().metrics["loss:sum"]
opt.result()
state = tc.save_state("w1", ttl_seconds=7200).result().path
sampler_path = tc.save_weights_for_sampler("s1", ttl_seconds=7200).result().path
s1 = sc.create_sampling_client(model_path=sampler_path).result()
r = s1.sample(prompt=prompt, num_samples=2, sampling_params=types.SamplingParams(max_tokens=4, seed=5)).result()
out["tokens"] = [list(s.tokens) for s in r.sequences]
full = list(b"Hello") + list(r.sequences[0].tokens)
out["logprobs"] = s1.compute_logprobs(types.ModelInput.from_ints(full)).result()
s2 = tc.save_weights_and_get_sampling_client().result()
out["tokens2"] = list(s2.sample(prompt=prompt, num_samples=1, sampling_params=types.SamplingParams(max_tokens=3, seed=6)).result().sequences[0].tokens)
tc2 = sc.create_training_client_from_state_with_optimizer(state).result()
out["loss_from_state"] = tc2.forward(batch, "cross_entropy").result().metrics["loss:sum"]
rest = tinker.RestClient(base_url=base_url)
rest.set_checkpoint_ttl_from_tinker_path(state, None).result()
out["checkpoints"] = sorted(c.tinker_path for c in rest.list_checkpoints(tc.model_id).result().checkpoints)
sc.close("success").result()
print(json.dumps(out), flush=True)
