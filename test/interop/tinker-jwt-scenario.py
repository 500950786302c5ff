"""JWT mode with the official SDK (test/interop/tinker-jwt.test.ts runs it). Usage: python tinker-jwt-scenario.py
BASE_URL BASE_MODEL PAUSE_SECONDS. Trains, waits PAUSE_SECONDS (longer than a JWT lives), trains again, closes.
Prints one JSON line: "ok" or the error."""
import json
import sys
import time

import tinker
from tinker import types

base_url, base_model, pause = sys.argv[1], sys.argv[2], float(sys.argv[3])
toks = list(b"Hello, world!\n")
batch = [types.Datum(model_input=types.ModelInput.from_ints(toks[:-1]), loss_fn_inputs={"target_tokens": toks[1:], "weights": [1.0] * (len(toks) - 1)})]
try:
    sc = tinker.ServiceClient(base_url=base_url)
    tc = sc.create_lora_training_client(base_model=base_model, rank=4, seed=1).result()
    first = tc.forward(batch, "cross_entropy").result().metrics["loss:sum"]
    time.sleep(pause)
    second = tc.forward(batch, "cross_entropy").result().metrics["loss:sum"]
    sc.close("success").result()
    print(json.dumps({"result": "ok", "same_loss": first == second}), flush=True)
except Exception as e:  # noqa: BLE001
    print(json.dumps({"result": f"{type(e).__name__}: {str(e)[:300]}"}), flush=True)
