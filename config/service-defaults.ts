// Where a run config that leaves its services out finds them: from the environment of the process that reads it
// (the client for `client start`, the worker for a run started with the Temporal CLI), in the same names the
// services and `npm start` use. So example configs carry no ports, and a user who moved a service (STORE_PORT=5000
// npm start) starts them with the same variables instead of editing files. A field the config gives is kept.
//   storeAddress  AGL_STORE_URL, else http://127.0.0.1:$STORE_PORT (4747)
//   proxyUrl      AGL_PROXY_URL, else http://127.0.0.1:$PROXY_PORT (12306), unless llmProxyPort is given
//   baseUrl       for local/ models only: TINKER_BASE_URL, else http://127.0.0.1:$TRAINER_PORT (8110); for other
//                 models an absent baseUrl stays null (the hosted service, or the worker's TINKER_BASE_URL)

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function local(env: NodeJS.ProcessEnv, portVar: string, fallback: number): string {
  const port = env[portVar];
  return `http://127.0.0.1:${port && /^\d+$/.test(port) && port !== '0' ? port : fallback}`;
}

/** `raw` with the absent service URLs filled in from `env`; anything that is not a config object is returned as is. */
export function withServiceDefaults(raw: unknown, env: NodeJS.ProcessEnv = process.env): unknown {
  if (!isObject(raw)) return raw;
  const out = { ...raw };
  if (!('storeAddress' in out)) out.storeAddress = env.AGL_STORE_URL || local(env, 'STORE_PORT', 4747);
  if (!('proxyUrl' in out) && !('llmProxyPort' in out)) out.proxyUrl = env.AGL_PROXY_URL || local(env, 'PROXY_PORT', 12306);
  if (!('baseUrl' in out) && typeof out.modelName === 'string' && out.modelName.startsWith('local/')) {
    out.baseUrl = env.TINKER_BASE_URL || local(env, 'TRAINER_PORT', 8110);
  }
  return out;
}
