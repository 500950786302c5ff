// One agent call over HTTP, whatever its API: read the body, let the API parse it, run the internal call (plain
// or rollout-scoped), print the answer as the API's JSON or event stream; errors in the API's own format.
import type http from 'node:http';
import type { AgentApi } from './apis/api';
import type { Conversations } from './apis/responses-store';
import { ApiError } from './errors';
import { readJson, send, sendError } from './http-io';
import { runCall, type CallOptions, type Scope } from './internal-call';
import type { PolicySpec } from './policy-spec';
import { checkScopeId } from './routes';

export interface CallRouteDeps {
  callOptions: CallOptions;
  conversations: Conversations;
  maxBodyBytes: number;
}

export function policyHeaders(spec: PolicySpec): Record<string, string> {
  return { 'x-agl-policy': spec.switchId, 'x-agl-policy-model': encodeURIComponent(spec.modelName) };
}

/** The rollout and attempt of a call: from the URL, else from x-rollout-id / x-attempt-id; and whether the client retries it. */
function scopeOf(req: http.IncomingMessage, urlScope: Scope | null): Scope | null {
  let scope = urlScope;
  const hr = req.headers['x-rollout-id'];
  const ha = req.headers['x-attempt-id'];
  if (!scope && typeof hr === 'string' && typeof ha === 'string' && hr && ha) {
    scope = { rolloutId: checkScopeId(hr, 'rollout', 'x-rollout-id header'), attemptId: checkScopeId(ha, 'attempt', 'x-attempt-id header') };
  }
  // The OpenAI and Anthropic clients number their retries of one request; a retry may be answered from the store.
  if (scope && Number(req.headers['x-stainless-retry-count'] ?? 0) > 0) scope = { ...scope, clientRetry: true };
  return scope;
}

export async function serveCall(req: http.IncomingMessage, res: http.ServerResponse, api: AgentApi, urlScope: Scope | null, deps: CallRouteDeps): Promise<void> {
  try {
    if (req.method !== 'POST') throw new ApiError(405, `${req.method} is not allowed here; use POST`, 'invalid_request_error', null, 'method_not_allowed');
    const body = await readJson(req, deps.maxBodyBytes);
    const scope = scopeOf(req, urlScope);
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    const parsed = await api.parse(body, { scope, conversations: deps.conversations, signal: abort.signal });
    const result = await runCall(parsed.call, scope, abort.signal, deps.callOptions);
    parsed.answered?.(result.answer);
    const headers = policyHeaders(result.policy);
    if (result.sequenceId !== null) headers['x-agl-sequence-id'] = String(result.sequenceId);
    if (!parsed.call.stream) return send(res, 200, parsed.body(result.answer), headers);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', ...headers });
    for (const e of parsed.events(result.answer)) res.write(e);
    res.end();
  } catch (err) {
    sendError(res, err, deps.callOptions.log, (e) => api.errorBody(e));
  }
}
