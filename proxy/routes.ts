// The proxy's route table, and URL → route (pure). Rollout-scoped URLs /rollout/{rid}/attempt/{aid}/<rest> are
// served as <rest>. Each agent API is served with and without the /v1 prefix. The server dispatches through
// ROUTES (and checks the method against it), and the route fuzz test (test/fuzz/routes.test.ts) sends to every
// route it lists, so a route added here is fuzzed with no new test code.
import { compilePath, idProblem, quote, type RouteDoc } from '../common/front-door';
import { ApiError, badRequest } from './errors';
import type { ApiName } from './internal-call';

export type Route =
  | { kind: 'call'; api: ApiName }
  | { kind: 'models' }
  | { kind: 'model'; id: string }
  | { kind: 'health' }
  | { kind: 'admin-policy' }
  | { kind: 'not-found'; path: string };

export interface Routed {
  route: Route;
  scope: { rolloutId: string; attemptId: string } | null;
}

interface ProxyRoute {
  path: string;
  methods: string[];
  /** A small body it serves (RouteDoc.example). */
  example?: Record<string, unknown>;
  /** The route, given the path's parameters. */
  route: (params: Record<string, string>) => Route;
  /** Also served under /rollout/{rollout_id}/attempt/{attempt_id}. */
  scoped: boolean;
}

const CALLS: Record<string, ApiName> = {
  '/chat/completions': 'chat',
  '/responses': 'responses',
  '/messages': 'messages',
  '/completions': 'completions',
};

/** A minimal call of each agent API. */
const EXAMPLES: Record<ApiName, Record<string, unknown>> = {
  chat: { messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 },
  responses: { input: 'hi', max_output_tokens: 2 },
  messages: { model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 },
  completions: { prompt: 'hi', max_tokens: 2 },
};

export const SCOPE_PREFIX = '/rollout/{rollout_id}/attempt/{attempt_id}';

export const ROUTES: ProxyRoute[] = [
  ...Object.entries(CALLS).flatMap(([p, api]) => ['/v1', ''].map((v) => ({ path: `${v}${p}`, methods: ['POST'], example: EXAMPLES[api], route: (): Route => ({ kind: 'call', api }), scoped: true }))),
  ...['/v1/models', '/models'].map((path) => ({ path, methods: ['GET'], route: (): Route => ({ kind: 'models' }), scoped: true })),
  ...['/v1/models/{model*}', '/models/{model*}'].map((path) => ({ path, methods: ['GET'], route: (p: Record<string, string>): Route => ({ kind: 'model', id: p.model! }), scoped: true })),
  ...['/health', '/healthz', '/v1/health'].map((path) => ({ path, methods: ['GET', 'HEAD'], route: (): Route => ({ kind: 'health' }), scoped: true })),
  { path: '/admin/policy', methods: ['GET', 'POST'], route: () => ({ kind: 'admin-policy' }), scoped: false },
];

const COMPILED = ROUTES.map((r) => ({ ...r, ...compilePath(r.path) }));

/** The routes as the route fuzz test reads them: each path, and the scoped one where it is served. */
export function routeDocs(): RouteDoc[] {
  return ROUTES.flatMap((r) => [r.path, ...(r.scoped ? [`${SCOPE_PREFIX}${r.path}`] : [])]
    .flatMap((path) => r.methods.map((method) => ({ method, path, ...(r.example && method === 'POST' ? { example: r.example } : {}) }))));
}

/** The methods the route of `kind` takes (a 405 names them). */
export function methodsOf(route: Route): string[] {
  return ROUTES.find((r) => r.route({ model: '' }).kind === route.kind)?.methods ?? [];
}

const SCOPED = /^\/rollout\/([^/]+)\/attempt\/([^/]+)(\/.*)?$/;

/** decodeURIComponent that answers 400 for malformed percent-encoding instead of throwing a URIError (a 500). */
function decode(segment: string, what: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest(`malformed percent-encoding in the ${what} of the URL: ${quote(segment)}`, null, 'invalid_url');
  }
}

/** A rollout or attempt id (from the URL or a header) the store can be asked about, else a 400 naming it. */
export function checkScopeId(id: string, what: 'rollout' | 'attempt', where: string): string {
  const problem = idProblem(id);
  if (problem) throw new ApiError(400, `invalid ${what} id in the ${where}: it ${problem}`, 'invalid_request_error', null, 'invalid_id');
  return id;
}

export function routeOf(url: string): Routed {
  let path = url.split('?')[0]!;
  let scope: Routed['scope'] = null;
  const m = SCOPED.exec(path);
  if (m) {
    scope = { rolloutId: checkScopeId(decode(m[1]!, 'rollout id'), 'rollout', 'URL'), attemptId: checkScopeId(decode(m[2]!, 'attempt id'), 'attempt', 'URL') };
    path = m[3] ?? '/';
  }
  if (path.length > 1) path = path.replace(/\/+$/, '');
  for (const r of COMPILED) {
    if (scope && !r.scoped) continue;
    const found = r.pattern.exec(path);
    if (!found) continue;
    const params: Record<string, string> = {};
    r.keys.forEach((k, i) => (params[k] = decode(found[i + 1]!, `${k} id`)));
    return { route: r.route(params), scope };
  }
  return { route: { kind: 'not-found', path }, scope };
}
