// The model provider an agent worker gives `@temporalio/ai-sdk`'s plugin while it trains: the one change to the
// agent's worker (`new AiSdkPlugin({ modelProvider: trainingProvider() })` in place of its real provider). The
// plugin runs every model call of the agent's workflows as an activity that asks the provider for the model; here
// that model sends the call to the training proxy under the rollout and attempt of the workflow that made it (its
// workflow id names both: rollout-ids.ts), so the proxy records spans, token ids and logprobs exactly as for a
// runner's agent. The agent's workflow code does not change, and runs in production against its real provider.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { createOpenAI } from '@ai-sdk/openai';
import type {
  EmbeddingModelV3, ImageModelV3, LanguageModelV3, LanguageModelV3CallOptions, ProviderV3,
} from '@ai-sdk/provider';
import { APICallError, NoSuchModelError } from '@ai-sdk/provider';
import { scopedProxyEndpoint } from '../../store/llm-resource';
import { rolloutScopeOf, type AgentRolloutMemo, type RolloutScope } from './rollout-ids';
import { BoundedMap } from '../../common/bounded-map';

export interface TrainingProviderOptions {
  /**
   * The proxy's base URL as this worker reaches it. Default: `AGL_PROXY_URL`, else the URL the training run put in
   * the workflow's memo (read once per workflow).
   */
  proxyUrl?: string;
  /**
   * The provider for workflows that are not training rollouts (started by anything but a training run). Without
   * it their model calls fail, saying so.
   */
  fallback?: ProviderV3;
  /** `chat` (Chat Completions, the default) or `responses`: the OpenAI API the proxy is called with. */
  api?: 'chat' | 'responses';
  /** Deadline of one model call (ms, default 10 minutes). */
  timeoutMs?: number;
}

/** The proxy URL of each workflow that asked, from its memo (a workflow's memo does not change). */
const memoProxyUrls = new BoundedMap<string, Promise<string>>(10_000);

async function proxyUrlFromMemo(workflowId: string): Promise<string> {
  let found = memoProxyUrls.get(workflowId);
  if (!found) {
    found = Context.current().client.workflow.getHandle(workflowId).describe().then((d) => {
      const memo = d.memo?.agl as AgentRolloutMemo | undefined;
      if (!memo?.proxyUrl) throw new Error(`workflow ${workflowId} has no training memo (agl.proxyUrl); set AGL_PROXY_URL on the agent worker`);
      return memo.proxyUrl;
    });
    found.catch(() => memoProxyUrls.delete(workflowId));
    memoProxyUrls.set(workflowId, found);
  }
  return found;
}

/** The rollout the calling activity's workflow plays, or null outside a training rollout. */
function callingRollout(): { workflowId: string; scope: RolloutScope } | null {
  let workflowId: string | undefined;
  try {
    workflowId = Context.current().info.workflowExecution?.workflowId;
  } catch {
    return null; // not in an activity
  }
  const scope = workflowId ? rolloutScopeOf(workflowId) : null;
  return scope && workflowId ? { workflowId, scope } : null;
}

class TrainingLanguageModel implements LanguageModelV3 {
  readonly specificationVersion = 'v3' as const;
  readonly provider = 'agl-training';
  readonly supportedUrls = {};

  constructor(readonly modelId: string, private readonly options: TrainingProviderOptions) {}

  private async model(): Promise<LanguageModelV3> {
    const caller = callingRollout();
    if (!caller) {
      if (this.options.fallback) return this.options.fallback.languageModel(this.modelId);
      throw new Error('this model call is not part of a training rollout (its workflow was not started by a training run), and the training provider was given no fallback provider');
    }
    const base = this.options.proxyUrl ?? process.env.AGL_PROXY_URL ?? (await proxyUrlFromMemo(caller.workflowId));
    const baseURL = scopedProxyEndpoint(base.replace(/\/+$/, '').replace(/\/v1$/, '') + '/v1', caller.scope.rolloutId, caller.scope.attemptId);
    const timeoutMs = this.options.timeoutMs ?? 600_000;
    const openai = createOpenAI({
      baseURL,
      apiKey: process.env.AGL_PROXY_TOKEN ?? 'agl-training',
      fetch: (input, init) => fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs) }),
    });
    return this.options.api === 'responses' ? openai.responses(this.modelId) : openai.chat(this.modelId);
  }

  async doGenerate(options: LanguageModelV3CallOptions) {
    return refusalsFinal(async () => (await this.model()).doGenerate(options));
  }

  async doStream(options: LanguageModelV3CallOptions) {
    return refusalsFinal(async () => (await this.model()).doStream(options));
  }
}

/**
 * A call the proxy refused for what it is (a 4xx that is not 408, 409 or 429: a prompt over the model's context, a
 * malformed request) fails the model-call activity for good: Temporal's default activity retry would send the same
 * call for ever, and the rollout would hang until its timeout with the reason only in the agent worker's log. The
 * failure's message is the proxy's own line, which the training run reports (activities/rollout-failures.ts).
 */
export async function refusalsFinal<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (APICallError.isInstance(err) && !err.isRetryable && err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
      throw ApplicationFailure.create({
        type: 'ModelCallRefused',
        nonRetryable: true,
        message: `the training proxy refused the model call (HTTP ${err.statusCode}): ${refusalLine(err)}`,
      });
    }
    throw err;
  }
}

/** The proxy's error message from its OpenAI-shaped body, on one line and short; else the SDK's message. */
function refusalLine(err: APICallError): string {
  let text = err.message;
  try {
    const body = JSON.parse(err.responseBody ?? '') as { error?: { message?: unknown }; detail?: unknown };
    const m = body.error?.message ?? body.detail;
    if (typeof m === 'string' && m) text = m;
  } catch {
    // not JSON: the SDK's own message
  }
  return text.replace(/\s+/g, ' ').trim().slice(0, 300);
}

/** The provider to give the AI SDK plugin on a worker whose agent workflows train (see the file comment). */
export function trainingProvider(options: TrainingProviderOptions = {}): ProviderV3 {
  const fallback = options.fallback;
  return {
    specificationVersion: 'v3',
    languageModel: (modelId: string) => new TrainingLanguageModel(modelId, options),
    embeddingModel: (modelId: string): EmbeddingModelV3 => {
      if (fallback) return fallback.embeddingModel(modelId);
      throw new NoSuchModelError({ modelId, modelType: 'embeddingModel', message: 'the training provider serves language models only' });
    },
    imageModel: (modelId: string): ImageModelV3 => {
      if (fallback) return fallback.imageModel(modelId);
      throw new NoSuchModelError({ modelId, modelType: 'imageModel', message: 'the training provider serves language models only' });
    },
  };
}
