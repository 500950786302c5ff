// What a run config can be checked against on the trainer before anything starts: the credential a hosted
// service needs (a missing TINKER_API_KEY is said at once instead of after minutes of retries) and whether the
// trainer serves the model (its get_server_capabilities), so a misspelt model name fails the run with the
// models it could have been, instead of retrying for ever. `validate` runs it in the client; prepareRun, the
// run's first activity, in the worker, whose environment and trainer are the ones that count.
import { ServiceClient } from '../tinker';
import { TinkerAuthError } from '../tinker/auth';
import { DEFAULT_BASE_URL, isHostedTinkerUrl } from '../tinker/config';
import { TinkerApiError } from '../tinker/errors';
import { engineLabel } from '../tinker/engine-profile';
import { engineFit, type EngineNeeds } from './engine-fit';

export interface TrainerCheck {
  /** Mistakes in the config or the environment, each with its field path: the run cannot work. */
  problems: string[];
  /** Set when the trainer could not be asked (down, unreachable): nothing is known either way. */
  unreachable: string | null;
  /** What works differently on this engine but still works (said once, at validate and start). */
  notes?: string[];
}

/** What checkTrainer reads of a run config. */
export type TrainerNeeds = { modelName: string; klReferenceModel?: { baseModel: string } | null; klPenaltyCoef?: number } & Partial<EngineNeeds>;

export interface TrainerCheckOptions {
  /** The trainer to ask: the worker's override, else the config's baseUrl, else TINKER_BASE_URL or hosted Tinker. */
  baseUrl: string | null;
  env?: NodeJS.ProcessEnv;
  /** How long to try to reach the trainer (ms). */
  timeoutMs?: number;
}

/** The hosted service, which never answers without a credential. */
export const isHostedTinker = isHostedTinkerUrl;

export async function checkTrainer(cfg: TrainerNeeds, opts: TrainerCheckOptions): Promise<TrainerCheck> {
  const env = opts.env ?? process.env;
  const url = (opts.baseUrl ?? (env.TINKER_BASE_URL || DEFAULT_BASE_URL)).replace(/\/+$/, '');
  const field = opts.baseUrl === null ? 'baseUrl (null: hosted Tinker)' : 'baseUrl';
  if (isHostedTinker(url) && !env.TINKER_API_KEY && !env.TINKER_CREDENTIAL_CMD) {
    return {
      problems: [`${field}: ${url} needs a credential: set TINKER_API_KEY (or TINKER_CREDENTIAL_CMD) in the environment of the worker and the proxy`],
      unreachable: null,
    };
  }
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const client = new ServiceClient({
    baseUrl: url,
    apiKey: env.TINKER_API_KEY || undefined,
    credentialCmd: env.TINKER_CREDENTIAL_CMD || undefined,
    httpTimeoutMs: Math.min(5_000, timeoutMs),
    retryBudgetMs: timeoutMs,
  });
  let served: string[];
  const fit: { problems: string[]; notes: string[] } = { problems: [], notes: [] };
  try {
    served = (await client.getServerCapabilities({ timeoutMs })).map((m) => m.modelName);
    const profile = await client.engineProfile({ timeoutMs });
    Object.assign(fit, engineFit({ loraRank: cfg.loraRank ?? 32, ...cfg }, profile, url));
    // Whether the KL penalty's reference logprobs come back is asked of the engine itself: three tokens, one sample.
    const klModel = cfg.klReferenceModel?.baseModel ?? cfg.modelName;
    if ((cfg.klPenaltyCoef ?? 0) > 0 && served.includes(klModel) && fit.problems.length === 0) {
      const logprobs = await client
        .createSamplingClient({ baseModel: klModel }, { timeoutMs })
        .then((s) => s.computeLogprobs([1, 2, 3], { timeoutMs }))
        .catch((err: Error) => (err instanceof TinkerApiError && err.isUserError ? null : Promise.reject(err)));
      if (!logprobs || logprobs.slice(1).some((v) => typeof v !== 'number')) {
        fit.problems.push(`klPenaltyCoef: ${engineLabel(profile, url)} returns no prompt logprobs for ${klModel}, which the KL penalty needs; set klPenaltyCoef to 0`);
      }
    }
  } catch (err) {
    if (err instanceof TinkerAuthError) return { problems: [`${field}: the credential for ${url}: ${err.message}`], unreachable: null };
    if (err instanceof TinkerApiError && (err.status === 401 || err.status === 403)) {
      return { problems: [`${field}: ${url} refused the credential (HTTP ${err.status}): check TINKER_API_KEY or TINKER_CREDENTIAL_CMD`], unreachable: null };
    }
    // A Tinker-compatible service without the endpoint: nothing to check the names against.
    if (err instanceof TinkerApiError && (err.status === 404 || err.status === 405)) return { problems: [], unreachable: null };
    return { problems: [], unreachable: `could not ask the trainer at ${url} which models it serves: ${(err as Error).message.split('\n')[0]}` };
  } finally {
    await client.close().catch(() => undefined);
  }
  const problems: string[] = [];
  const want = (path: string, model: string) => {
    if (!served.includes(model)) problems.push(`${path}: ${JSON.stringify(model)} is not served by the trainer at ${url} (it serves: ${served.join(', ') || 'nothing'})`);
  };
  want('modelName', cfg.modelName);
  if (cfg.klReferenceModel) want('klReferenceModel.baseModel', cfg.klReferenceModel.baseModel);
  problems.push(...fit.problems);
  return { problems, unreachable: null, notes: fit.notes };
}
