// What a Tinker-API engine can do, asked of the engine itself. Hosted Tinker and the local trainer speak SDK 0.38;
// SDK-0.25-era servers (SkyRL's Tinker API) differ in a few calls. Such a server is a FastAPI app that serves its
// OpenAPI document, so its routes and request schemas say what it takes; a server without one (hosted Tinker, the
// local trainer) is taken to speak SDK 0.38 whole. Pure: the document in, the profile out.

export interface EngineProfile {
  /** Who answered: 'skyrl' (SkyRL's Tinker API), 'tinker' (hosted, the local trainer, or any 0.38 server). */
  name: 'skyrl' | 'tinker';
  /** The engine's own API version where it states one. */
  version: string | null;
  /** load_weights names a model created first and must be its first request (SDK 0.25); else it creates the model (0.38). */
  loadNeedsModel: boolean;
  /** PUT …/checkpoints/{id}/ttl is served: checkpoints can be given an expiry after they are saved. */
  checkpointTtl: boolean;
  /** DELETE …/checkpoints/{id} is served. */
  checkpointDelete: boolean;
  /** POST /sessions/{id}/finish is served. */
  sessionFinish: boolean;
}

/** SDK 0.38's whole API: what a server without an OpenAPI document is taken to serve. */
export const SDK_038_PROFILE: EngineProfile = {
  name: 'tinker',
  version: null,
  loadNeedsModel: false,
  checkpointTtl: true,
  checkpointDelete: true,
  sessionFinish: true,
};

interface OpenApiDocument {
  info?: { title?: string; version?: string };
  paths?: Record<string, Record<string, unknown>>;
  components?: { schemas?: Record<string, { required?: string[] }> };
}

/** SkyRL 0.4.0 titles its app so (it began as a mock of the service). */
const SKYRL_TITLES = ['Tinker API Mock'];

/** The profile an engine's OpenAPI document describes. */
export function profileFromOpenApi(doc: OpenApiDocument): EngineProfile {
  const paths = doc.paths ?? {};
  const has = (test: (path: string) => boolean, method: string) => Object.entries(paths).some(([p, ops]) => test(p) && method in ops);
  const loadRequired = doc.components?.schemas?.LoadWeightsRequest?.required ?? [];
  const title = doc.info?.title ?? '';
  return {
    name: SKYRL_TITLES.includes(title) || /skyrl/i.test(title) ? 'skyrl' : 'tinker',
    version: doc.info?.version ?? null,
    loadNeedsModel: loadRequired.includes('model_id'),
    checkpointTtl: has((p) => /\/checkpoints\/.+\/ttl$/.test(p), 'put'),
    checkpointDelete: has((p) => /\/training_runs\/[^/]+\/checkpoints\/.+/.test(p), 'delete'),
    sessionFinish: has((p) => /\/sessions\/[^/]+\/finish$/.test(p), 'post'),
  };
}

/** One line naming the engine, for messages: "SkyRL's Tinker API 0.0.1 at http://…". */
export function engineLabel(profile: EngineProfile, baseUrl: string): string {
  const who = profile.name === 'skyrl' ? "SkyRL's Tinker API" : 'the Tinker service';
  return `${who} at ${baseUrl}`;
}
