// `npm run proxy`: the OpenAI-compatible LLM proxy on 127.0.0.1:12306. Flags (env):
//   --store URL (AGL_STORE_URL)        where rollout-scoped calls write spans (AGL_STORE_TOKEN if it needs one)
//   --trainer URL (TINKER_BASE_URL)    the Tinker API to sample from (hosted Tinker or `npm run trainer`)
//   --model NAME (AGL_PROXY_MODEL)     initial policy: this base model's sampler, so it serves before any switch
//   --renderer NAME (AGL_PROXY_RENDERER)  default: the one recommended for the model
//   --retries N (AGL_PROXY_RETRIES)    sampler retries per call (llmProxyRetryAttempts), default 0
//   --call-timeout-ms MS, --drain-timeout-ms MS
//   --policy-idle-ms MS (default 120000)  a policy other than the current one is released after this long unused
//   --data DIR (PROXY_DATA, default .data/proxy)  the last switched policy is kept in DIR/policy.json and
//                                      resumed on restart (it takes precedence over --model)
// AGL_PROXY_ADMIN_TOKEN, when set, is the bearer token POST/GET /admin/policy need; bound beyond loopback, the proxy
// refuses to start without it unless --trusted-network (AGL_TRUSTED_NETWORK=1) says the network is trusted.
import { announceListening, exitOnSignal, parseServiceArgs, runMain, UsageError } from '../common/service-args';
import path from 'node:path';
import { loadPolicy, PolicyFile } from './policy-file';
import { parsePolicySpec } from './policy-spec';
import type { PolicySpec } from './policy-spec';
import type { PolicyManager } from './policy';
import { SamplerError } from './sampler';
import { startProxy } from './server';
import { StoreSpanSink } from './span-sink';
import { TinkerSamplerFactory } from './tinker-sampler';
import { ApiError } from './errors';
import { setTimeout as sleep } from 'node:timers/promises';

function intFlag(name: string, v: string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`proxy: --${name} must be a non-negative integer, got ${JSON.stringify(v)}`);
  return n;
}

/** The initial policy, retried until the trainer answers (calls wait for it meanwhile). */
/** The initial policies in order (saved, then --model); each retried while the trainer is not reachable. */
async function applyInitial(policies: PolicyManager, specs: PolicySpec[], log: (l: string) => void): Promise<void> {
  const spec = specs[0];
  if (!spec) return;
  for (let attempt = 1; ; attempt++) {
    if (policies.current()) return; // a run switched the policy meanwhile
    try {
      await policies.switchTo(spec);
      log(`serving ${spec.switchId}: ${spec.samplerPath ?? spec.baseModel} (${spec.renderer})`);
      return;
    } catch (err) {
      if (err instanceof ApiError || (err instanceof SamplerError && !err.retryable)) {
        log(`initial policy ${spec.switchId} rejected: ${(err as Error).message}`);
        return applyInitial(policies, specs.slice(1), log);
      }
      if (attempt === 1 || attempt % 30 === 0) log(`initial policy not ready (${(err as Error).message}); retrying`);
      await sleep(1000);
    }
  }
}

runMain(async () => {
  const args = parseServiceArgs(process.argv.slice(2), {
    name: 'proxy',
    envPrefix: 'PROXY',
    defaultPort: 12306,
    defaultDataDir: '.data/proxy',
    extra: {
      store: 'AGL_STORE_URL',
      trainer: 'TINKER_BASE_URL',
      model: 'AGL_PROXY_MODEL',
      renderer: 'AGL_PROXY_RENDERER',
      retries: 'AGL_PROXY_RETRIES',
      'call-timeout-ms': 'AGL_PROXY_CALL_TIMEOUT_MS',
      'drain-timeout-ms': 'AGL_PROXY_DRAIN_TIMEOUT_MS',
      'policy-idle-ms': 'AGL_PROXY_POLICY_IDLE_MS',
    },
  });
  const v = args.values;
  const log = (line: string) => process.stderr.write(`[proxy] ${line}\n`);
  const factory = new TinkerSamplerFactory({ baseUrl: v.trainer, log });
  const policyFile = path.join(args.dataDir, 'policy.json');
  const policyOnDisk = new PolicyFile(policyFile, log);
  const initial: PolicySpec[] = [];
  const saved = loadPolicy(policyFile);
  if (saved) {
    log(`resuming the saved policy ${saved.switchId} from ${policyFile}`);
    initial.push(saved);
  }
  if (v.model) {
    try {
      initial.push(parsePolicySpec({ switchId: `initial:${v.model}`, modelName: v.model, baseModel: v.model, renderer: v.renderer }));
    } catch (err) {
      throw new UsageError(`proxy: ${err instanceof ApiError ? err.message : String(err)}`);
    }
  }
  const proxy = await startProxy({
    host: args.host,
    port: args.port,
    factory,
    sink: v.store ? new StoreSpanSink(v.store, { token: process.env.AGL_STORE_TOKEN || undefined }) : null,
    adminToken: process.env.AGL_PROXY_ADMIN_TOKEN || undefined,
    trustedNetwork: args.trustedNetwork,
    retryAttempts: intFlag('retries', v.retries, 0),
    callTimeoutMs: intFlag('call-timeout-ms', v['call-timeout-ms'], 300_000),
    drainTimeoutMs: intFlag('drain-timeout-ms', v['drain-timeout-ms'], 30_000),
    policyIdleMs: intFlag('policy-idle-ms', v['policy-idle-ms'], 120_000),
    onSwitch: (spec) => policyOnDisk.save(spec),
    degraded: () => policyOnDisk.health(),
    log,
  });
  void applyInitial(proxy.policies, initial, log);
  if (!v.store) log('no --store: rollout-scoped calls are served but record no spans');
  // In-flight calls get up to 1 s to finish (the whole exit takes under 2 s: a service manager's patience); a call
  // cut off gets no answer and is retried by its agent.
  exitOnSignal(() => proxy.close(1000).then(() => factory.close()), { name: 'proxy' });
  announceListening('proxy', args.host, proxy.port);
});
