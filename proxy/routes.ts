// URL → route (pure). Rollout-scoped URLs /rollout/{rid}/attempt/{aid}/<rest> are served as <rest>.

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

export function routeOf(url: string): Routed {
  let path = url.split('?')[0];
  let scope: Routed['scope'] = null;
  const m = SCOPED.exec(path);
  if (m) {
    scope = { rolloutId: decodeURIComponent(m[1]), attemptId: decodeURIComponent(m[2]) };
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
      if (model) return { route: { kind: 'model', id: decodeURIComponent(model[1]) }, scope };
      return { route: { kind: 'not-found', path }, scope };
    }
  }
}
