"""The Python LightningStoreClient (agentlightning 0.3.0) drives a store: resources, enqueue, wait, spans, queries.

Usage: python store-py-client.py STORE_URL N
Rollouts are run meanwhile by whatever runners serve the store. Prints one JSON summary line prefixed "RESULT ".
Every answer is parsed into the v0.3 pydantic models by the client, so shapes the Python side rejects fail here.
"""
import asyncio
import json
import sys

from agentlightning import LightningStoreClient
from agentlightning.types import ProxyLLM


async def main(url: str, n: int) -> None:
    client = LightningStoreClient(url)
    try:
        assert await client.get_latest_resources() is None or True
        res = await client.add_resources({"main_llm": ProxyLLM(endpoint="http://127.0.0.1:9/v1", model="tiny")})
        rollouts = [await client.enqueue_rollout(input={"n": i}, mode="train") for i in range(1, n + 1)]
        ids = [r.rollout_id for r in rollouts]
        finished = []
        for _ in range(10):  # timeout=None: our server answers once all are done (or after its 25 s cap)
            finished = await client.wait_for_rollouts(rollout_ids=ids, timeout=None)
            if len(finished) == len(ids):
                break
        spans = {rid: await client.query_spans(rid, "latest") for rid in ids}
        got = await client.get_rollout_by_id(ids[0])
        missing = await client.get_rollout_by_id("ro-does-not-exist")
        attempts = await client.query_attempts(ids[0])
        latest_attempt = await client.get_latest_attempt(ids[0])
        queried = await client.query_rollouts(status_in=["succeeded"], rollout_id_in=ids)
        updated = await client.update_resources(res.resources_id, {"main_llm": ProxyLLM(endpoint="http://127.0.0.1:9", model="tiny2")})
        latest = await client.get_latest_resources()
        workers = await client.query_workers()
        stats = await client.statistics()
        seq = await client.get_next_span_sequence_id(ids[0], latest_attempt.attempt_id)
        summary = {
            "resources_id": res.resources_id,
            "ids": ids,
            "finished": [r.rollout_id for r in finished],
            "statuses": [r.status for r in finished],
            "rewards": {
                rid: [s.attributes.get("agentlightning.reward.0.value") for s in ss if s.name == "agentlightning.annotation"]
                for rid, ss in spans.items()
            },
            "first_has_attempt": hasattr(got, "attempt"),
            "missing": missing is None,
            "attempts_total": len(attempts),
            "latest_attempt_status": latest_attempt.status,
            "queried_total": len(queried),
            "updated_version": updated.version,
            "latest_model": latest.resources["main_llm"].model,
            "workers": len(workers),
            "stats_rollouts": stats["total_rollouts"],
            "next_seq": seq,
        }
        print("RESULT " + json.dumps(summary), flush=True)
    finally:
        await client.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
