"""Prints, as JSON, every scalar event in a TensorBoard run directory as TensorBoard's own reader loads it:
{"events": [[tag, step, value], ...] in file order (duplicates would show), "accumulated": {tag: [[step, value]]}}."""
import json
import math
import os
import sys

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
from tensorboard.compat.proto import event_pb2

run_dir = sys.argv[1]
files = sorted(f for f in os.listdir(run_dir) if "tfevents" in f)
events = []
for name in files:
    for raw in RawEventFileLoader(os.path.join(run_dir, name)).Load():
        event = event_pb2.Event.FromString(raw)
        for v in event.summary.value:
            value = v.simple_value if v.HasField("simple_value") else None
            events.append([v.tag, event.step, None if value is None or math.isnan(value) else value])

acc = EventAccumulator(run_dir, size_guidance={"scalars": 0})
acc.Reload()
accumulated = {
    tag: [[e.step, None if math.isnan(e.value) else e.value] for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]
}
print(json.dumps({"files": files, "events": events, "accumulated": accumulated}))
