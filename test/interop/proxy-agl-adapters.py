"""Agent-lightning 0.3.0's own adapters read the agl-temporal proxy's spans: the Python LightningStoreClient
fetches them (so they validate as `Span`), LlmProxyTraceToTriplet and TracerTraceToTriplet (llm_call_match
"litellm_request") turn them into triplets. Usage: proxy-agl-adapters.py STORE_URL ROLLOUT_ID ; prints one JSON line."""
import asyncio
import json
import sys

from agentlightning import LightningStoreClient, LlmProxyTraceToTriplet, TracerTraceToTriplet


async def main(url: str, rollout_id: str) -> None:
    client = LightningStoreClient(url)
    try:
        spans = list(await client.query_spans(rollout_id, "latest"))
    finally:
        await client.close()
    proxy = LlmProxyTraceToTriplet().adapt(spans)
    tracer = TracerTraceToTriplet(llm_call_match=r"openai\.chat\.completion|litellm_request", _skip_empty_token_spans=True).adapt(spans)
    print(json.dumps({
        "span_names": [s.name for s in spans],
        "proxy": [t.model_dump(mode="json") for t in proxy],
        "tracer": [t.model_dump(mode="json") for t in tracer],
    }))


asyncio.run(main(sys.argv[1], sys.argv[2]))
