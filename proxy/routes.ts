// URL → route (pure). Rollout-scoped URLs /rollout/{rid}/attempt/{aid}/<rest> are served as <rest>. Each agent API
// is served with and without the /v1 prefix.
import { badRequest } from './errors';
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

const CALLS: Record<string, ApiName> = {
  '/chat/completions': 'chat',
  '/responses': 'responses',
  '/messages': 'messages',
  '/completions': 'completions',
};

const SCOPED = /^\/rollout\/([^/]+)\/attempt\/([^/]+)(\/.*)?$/;

/** decodeURIComponent that answers 400 for malformed percent-encoding instead of throwing a URIError (a 500). */
function decode(segment: string, what: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest(`malformed percent-encoding in the ${what} of the URL: ${JSON.stringify(segment.slice(0, 100))}`, null, 'invalid_url');
  }
}

export function routeOf(url: string): Routed {
  let path = url.split('?')[0];
  let scope: Routed['scope'] = null;
  const m = SCOPED.exec(path);
  if (m) {
    scope = { rolloutId: decode(m[1], 'rollout id'), attemptId: decode(m[2], 'attempt id') };
    path = m[3] ?? '/';
  }
  if (path.length > 1) path = path.replace(/\/+$/, '');
  const api = CALLS[path.replace(/^\/v1\//, '/')];
  if (api) return { route: { kind: 'call', api }, scope };
  switch (path) {
    case '/v1/models':
    case '/models':
      return { route: { kind: 'models' }, scope };
    case '/health':
    case '/healthz':
    case '/v1/health':
      return { route: { kind: 'health' }, scope };
    case '/admin/policy':
      return { route: scope ? { kind: 'not-found', path } : { kind: 'admin-policy' }, scope };
    default: {
      const model = /^\/(?:v1\/)?models\/(.+)$/.exec(path);
      if (model) return { route: { kind: 'model', id: decode(model[1], 'model id') }, scope };
      return { route: { kind: 'not-found', path }, scope };
    }
  }
}
