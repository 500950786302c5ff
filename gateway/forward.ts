// The agent-facing proxy of the 1.0 gateway: POST /proxy/rollout/{rid}/attempt/{aid}/mode/{train|val}/openai/v1/
// {chat/completions|completions}, with upstream's checks in upstream's order (mode and path, rollout, JSON, an
// endpoint, pause, streaming), its retries and its model_request capture. Where the call goes:
// - a run's rollout: the run's proxy, on the rollout-scoped URL of the store attempt the 1.0 rollout is, so the
//   proxy samples from the run's policy and records the call as a span where training reads it. The run's
//   train/eval temperature applies (the gateway drops the agent's), as the policy it published says;
// - a rollout made through /api/rollouts: an endpoint registered with /api/models for the gateway's model (as
//   upstream: its temperatures and fields forced), else the proxy of the resources it was enqueued under.
import { clip } from '../common/front-door';
import { pickLlm } from '../store/llm-resource';
import { StoreError } from '../store/errors';
import { getResourcesById } from '../store/resource-ops';
import type { StoreDb } from '../store/store-db';
import type { JsonObject } from '../store/types';
import { recordEvent } from './events';
import { notFound, startedByAgent } from './lifecycle';
import { pickModel, readPause } from './models';
import { locate, type Located } from './view';

export interface GatewayProxyOptions {
  /** upstream default_proxy.model_name: what registered endpoints are looked up by, and forced on their calls. */
  modelName: string;
  trainTemperature: number;
  valTemperature: number;
  upstreamTimeoutMs: number;
  /** Pause before retry k (0-based); upstream: min(0.5·2^k, 8) s × U(0.75, 1.25). */
  retryDelayMs: (k: number) => number;
}

export const DEFAULT_PROXY_OPTIONS: GatewayProxyOptions = {
  modelName: 'Qwen/Qwen2.5-7B-Instruct',
  trainTemperature: 1,
  valTemperature: 0.7,
  upstreamTimeoutMs: 300_000,
  retryDelayMs: (k) => Math.min(500 * 2 ** k, 8000) * (0.75 + Math.random() * 0.5),
};

const MAX_ATTEMPTS = 6;
const retryable = (status: number) => status === 408 || status === 409 || status === 429 || status >= 500;

export interface Reply {
  status: number;
  json: unknown;
  headers?: Record<string, string>;
}

export interface ForwardContext {
  s: StoreDb;
  options: GatewayProxyOptions;
  inflight: { n: number };
  /** Waits until the writes made since `before` are durable (the store server's rule before answering). */
  durable(before: number): Promise<void>;
  writeCount(): number;
}

interface Target {
  url: (storeAttemptId: string) => string;
  headers: (storeAttemptId: string) => Record<string, string>;
  server: { model: string; endpoint: string; version: number | null };
  /** The run's proxy: its policy sets the temperature, and it always answers with token ids. */
  ownProxy: boolean;
}

function targetOf(s: StoreDb, loc: Located, path: string, o: GatewayProxyOptions): Target | null {
  const rid = loc.row.rollout_id;
  if (loc.meta.rollout_id !== undefined) {
    const model = pickModel(s, o.modelName, loc.v1Id);
    if (model) {
      return {
        url: () => `${model.endpoint.replace(/\/+$/, '')}/${path}`,
        // Our proxy, if registered, scopes the call by these; other servers ignore them.
        headers: (aid) => ({ 'x-rollout-id': rid, 'x-attempt-id': aid }),
        server: { ...model },
        ownProxy: false,
      };
    }
  }
  const resources = loc.row.resources_id ? getResourcesById(s, loc.row.resources_id) : null;
  const probe = resources ? pickLlm(resources.resources, rid, '{aid}') : null;
  if (!probe) return null;
  return {
    url: (aid) => `${pickLlm(resources!.resources, rid, aid)!.endpoint.replace(/\/+$/, '')}/${path}`,
    headers: (): Record<string, string> => (probe.apiKey ? { authorization: `Bearer ${probe.apiKey}` } : {}),
    server: { model: probe.model, endpoint: probe.endpoint.replace('/rollout/' + rid + '/attempt/{aid}', ''), version: null },
    ownProxy: true,
  };
}

function prepareBody(body: JsonObject, mode: string, path: string, target: Target, o: GatewayProxyOptions): JsonObject {
  const prepared: JsonObject = { ...body, model: target.server.model };
  if (target.ownProxy) {
    delete prepared.temperature;
    if (mode === 'train') prepared.logprobs = path === 'completions' ? 1 : true;
    return prepared;
  }
  prepared.temperature = mode === 'train' ? o.trainTemperature : o.valTemperature;
  prepared.return_token_ids = true;
  if (mode === 'train') prepared.logprobs = true;
  return prepared;
}

const sleep = (ms: number, signal: AbortSignal) => new Promise<void>((resolve) => {
  const timer = setTimeout(resolve, ms);
  signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
});

/** Sends with upstream's retries; the proxy sees gateway retries as client retries (x-stainless-retry-count). */
async function sendWithRetries(url: string, headers: Record<string, string>, body: JsonObject, agentRetries: number, o: GatewayProxyOptions, client: AbortSignal):
  Promise<{ status: number; json: JsonObject; retryCount: number }> {
  for (let k = 0; ; k++) {
    const retryHeader: Record<string, string> = Math.max(agentRetries, k) > 0 ? { 'x-stainless-retry-count': String(Math.max(agentRetries, k)) } : {};
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers, ...retryHeader },
        signal: AbortSignal.any([client, AbortSignal.timeout(o.upstreamTimeoutMs)]),
      });
    } catch (err) {
      if (client.aborted) throw err;
      const timedOut = (err as Error).name === 'TimeoutError';
      if (k === MAX_ATTEMPTS - 1) throw new StoreError(timedOut ? 'Upstream model server timed out' : 'Upstream model server request failed', timedOut ? 504 : 502);
      await sleep(o.retryDelayMs(k), client);
      continue;
    }
    if (!retryable(res.status) || k === MAX_ATTEMPTS - 1) {
      const text = await res.text();
      let json: JsonObject = {};
      if ((res.headers.get('content-type') ?? '').startsWith('application/json')) {
        try { json = JSON.parse(text) as JsonObject; } catch { json = {}; }
      }
      return { status: res.status, json, retryCount: k };
    }
    await res.arrayBuffer().catch(() => undefined);
    await sleep(o.retryDelayMs(k), client);
  }
}

function popRoutedExperts(response: JsonObject): unknown {
  const choices = response.choices;
  if (!Array.isArray(choices)) return null;
  for (const c of choices) {
    if (c && typeof c === 'object' && !Array.isArray(c) && c.routed_experts !== undefined && c.routed_experts !== null) {
      const r = c.routed_experts;
      delete (c as JsonObject).routed_experts;
      return r;
    }
  }
  return null;
}

function finishReason(response: JsonObject): string | null {
  const first = Array.isArray(response.choices) ? response.choices[0] : null;
  const reason = first && typeof first === 'object' && !Array.isArray(first) ? first.finish_reason : null;
  return typeof reason === 'string' && reason ? reason : null;
}

export interface ProxyCall {
  v1Id: string;
  attemptId: string;
  mode: string;
  path: string;
  /** The parsed body, or the reason it is not a JSON object. */
  body: { ok: true; value: unknown } | { ok: false };
  agentRetries: number;
  signal: AbortSignal;
}

export async function forwardCall(ctx: ForwardContext, call: ProxyCall): Promise<Reply> {
  const { s, options: o } = ctx;
  if (call.mode !== 'train' && call.mode !== 'val') return { status: 404, json: { detail: `Unsupported proxy mode: ${call.mode}` } };
  if (call.path !== 'chat/completions' && call.path !== 'completions') return { status: 404, json: { detail: `Unsupported upstream path: ${call.path}` } };
  const loc = locate(s, call.v1Id);
  if (!loc) throw notFound(call.v1Id);
  if (!call.body.ok) return { status: 400, json: { detail: 'Invalid JSON in request body' } };
  const body = call.body.value ?? {};
  if (typeof body !== 'object' || Array.isArray(body) || body === null) return { status: 400, json: { detail: 'Request body must be a JSON object' } };
  const target = targetOf(s, loc, call.path, o);
  if (!target) return { status: 503, json: { detail: `No servers available for model '${o.modelName}'` } };
  const pause = readPause(s);
  if (pause.paused) {
    return {
      status: 429,
      json: { error: 'gateway paused', reason: pause.reason },
      headers: { 'retry-after': String(pause.retry_after_seconds), 'x-agl-paused': 'true' },
    };
  }
  ctx.inflight.n++;
  try {
    const prepared = prepareBody(body as JsonObject, call.mode, call.path, target, o);
    if (prepared.stream === true) return { status: 400, json: { detail: 'Streaming responses are not supported' } };
    const before = ctx.writeCount();
    const started = startedByAgent(s, call.v1Id);
    await ctx.durable(before);
    // Cancelled in the store while queuing: there is no attempt to record its calls under.
    if (!started.attempt) throw new StoreError(`Rollout ${clip(call.v1Id)} ended before it started (${started.row.status} in the store); it takes no calls`, 409);
    const aid = started.attempt.attempt_id;
    const t0 = performance.now();
    const answer = await sendWithRetries(target.url(aid), target.headers(aid), prepared, call.agentRetries, o, call.signal);
    const latencyMs = performance.now() - t0;
    const routed = popRoutedExperts(answer.json);
    const usage = answer.json.usage;
    const afterCall = ctx.writeCount();
    const still = locate(s, call.v1Id); // unless deleted meanwhile
    if (still) recordEvent(s, still, call.attemptId, 'model_request', {
      model: target.server.model, model_version: target.server.version, request: prepared, response: answer.json,
      server: target.server, latency_ms: latencyMs, http_status: answer.status, status: answer.status < 400 ? 'ok' : 'error',
      retry_count: answer.retryCount, routed_experts: routed as JsonObject | null,
      usage: usage && typeof usage === 'object' && !Array.isArray(usage) ? usage : null, finish_reason: finishReason(answer.json),
    });
    await ctx.durable(afterCall);
    return { status: answer.status, json: answer.json };
  } finally {
    ctx.inflight.n--;
  }
}
