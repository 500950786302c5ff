// `tsx agents/examples/main.ts --agent hello --runners 8 --store URL`: a fleet of runners of an example agent.
import { parseArgs } from 'node:util';
import { exitOnSignal, runMain, UsageError } from '../../common/service-args';
import { startRunners, type AgentFunction } from '../runner';
import { ProxyChoice, parseProxyUrls } from '../proxy-choice';
import { guessAgent } from './guess';
import { helloAgent, helloDenseAgent } from './hello';
import { helloCompletionsAgent, helloMessagesAgent, helloResponsesAgent } from './hello-apis';
import { helloLongTailAgent, medianFromEnv } from './hello-longtail';

const AGENTS: Record<string, AgentFunction<never>> = {
  hello: helloAgent as AgentFunction<never>,
  'hello-dense': helloDenseAgent as AgentFunction<never>,
  // hello after a seeded long-tail delay per rollout (median AGL_LONGTAIL_MEDIAN_MS, p99 10x): the async benchmark.
  'hello-longtail': helloLongTailAgent as AgentFunction<never>,
  guess: guessAgent as AgentFunction<never>,
  // hello through the proxy's other agent APIs (hello-apis.ts).
  'hello-responses': helloResponsesAgent as AgentFunction<never>,
  'hello-messages': helloMessagesAgent as AgentFunction<never>,
  'hello-completions': helloCompletionsAgent as AgentFunction<never>,
};

runMain(async () => {
  let v;
  try {
    v = parseArgs({ options: { agent: { type: 'string' }, runners: { type: 'string' }, store: { type: 'string' }, proxy: { type: 'string' } }, strict: true }).values;
  } catch (err) {
    throw new UsageError(`runners: ${(err as Error).message}`);
  }
  const name = v.agent ?? process.env.AGL_AGENT ?? 'hello';
  const agent = AGENTS[name];
  if (!agent) throw new UsageError(`runners: --agent must be one of ${Object.keys(AGENTS).join(', ')}, got ${JSON.stringify(name)}`);
  const n = Number(v.runners ?? process.env.AGL_RUNNERS ?? 8);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`runners: --runners must be a positive integer, got ${JSON.stringify(v.runners)}`);
  if (name === 'hello-longtail') {
    try {
      process.stderr.write(`[runners] hello-longtail: median delay ${medianFromEnv()} ms, p99 10x\n`);
    } catch (err) {
      throw new UsageError(`runners: ${(err as Error).message}`);
    }
  }
  const storeUrl = v.store ?? process.env.AGL_STORE_URL ?? 'http://127.0.0.1:4747';
  // Several proxies (any serves any rollout): calls spread over them instead of the one the resources name.
  const proxyText = v.proxy ?? process.env.AGL_PROXY_URLS;
  let proxies: ProxyChoice | undefined;
  try {
    proxies = proxyText ? new ProxyChoice(parseProxyUrls(proxyText)) : undefined;
  } catch (err) {
    throw new UsageError(`runners: --proxy: ${(err as Error).message}`);
  }
  const group = startRunners(n, agent, { storeUrl, proxies, workerId: `${name}-${process.pid}`, log: (l) => process.stderr.write(`[runners] ${l}\n`) });
  // Agents see their signal aborted; a rollout whose report cannot reach the store (retried for a minute) does not
  // hold the exit past the services' deadline: its attempt is given up by the store as after a kill.
  exitOnSignal(() => group.stop(), { name: 'runners' });
  process.stdout.write(`${n} ${name} runners polling ${storeUrl}${proxies ? ` (proxies ${proxies.urls.join(', ')})` : ''}\n`);
  await group.done;
});
