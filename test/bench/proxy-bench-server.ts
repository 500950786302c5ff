// The proxy with a zero-latency scripted sampler, for test/bench/proxy-overhead.ts.
// Args: MODEL RENDERER [STORE_URL]
import { announceListening } from '../../common/service-args';
import { ScriptedSamplerFactory } from '../../proxy/fake-sampler';
import { parsePolicySpec } from '../../proxy/policy-spec';
import { startProxy } from '../../proxy/server';
import { StoreSpanSink } from '../../proxy/span-sink';

const [model, renderer, storeUrl] = process.argv.slice(2);
const REPLY = 'Hello! I am a small test policy, and this reply has a few dozen tokens in it, like an agent turn would.';

(async () => {
  const factory = new ScriptedSamplerFactory(() => renderer, () => REPLY);
  const proxy = await startProxy({
    port: 0,
    factory,
    sink: storeUrl ? new StoreSpanSink(storeUrl) : null,
    initialPolicy: parsePolicySpec({ switchId: 'bench', modelName: model, baseModel: model, renderer }),
    log: () => {},
  });
  announceListening('proxy', '127.0.0.1', proxy.port);
})();
