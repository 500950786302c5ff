// URL → route (pure). Rollout-scoped URLs /rollout/{rid}/attempt/{aid}/<rest> are served as <rest>.
import { badRequest } from './errors';

export type Route =
  | { kind: 'chat' }
  | { kind: 'models' }
  | { kind: 'model'; id: string }
  | { kind: 'health' }
  | { kind: 'admin-policy' }
  | { kind: 'not-found'; path: string };

export interface Routed {
  route: Route;
  scope: { rolloutId: string; attemptId: string } | null;
}

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
  switch (path) {
    case '/v1/chat/completions':
    case '/chat/completions':
      return { route: { kind: 'chat' }, scope };
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
