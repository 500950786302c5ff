// Proxy test setup: a proxy in this process with a scripted zero-latency sampler, and optionally the real
// store (in this process too) for spans.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ScriptedSampler, ScriptedSamplerFactory } from '../../proxy/fake-sampler';
import type { Sampler, SamplerTarget } from '../../proxy/sampler';
import type { Script } from '../../proxy/fake-sampler';
import type { PolicySpec } from '../../proxy/policy-spec';
import { DEFAULT_SAMPLING } from '../../proxy/policy-spec';
import { startProxy } from '../../proxy/server';
import type { ProxyOptions, ProxyServer } from '../../proxy/server';
import { StoreSpanSink } from '../../proxy/span-sink';
import { startStoreWithGateway } from '../../gateway/store-server';
import type { StoreServer } from '../../store/server';

export const echoScript: Script = (_prompt, params, i) => `Hello ${i}! t=${params.temperature}`;

export function policy(overrides: Partial<PolicySpec> = {}): PolicySpec {
  return { switchId: 'p0', modelName: 'local/tiny-hello', baseModel: 'local/tiny-hello', renderer: 'role_colon', sampling: { ...DEFAULT_SAMPLING }, ...overrides };
}

export interface Harness {
  proxy: ProxyServer;
  factory: ScriptedSamplerFactory;
  store: StoreServer | null;
  close(): Promise<void>;
}

export async function startHarness(
  opts: { script?: Script; delayMs?: number; withStore?: boolean; initial?: PolicySpec | null } & Partial<ProxyOptions> = {},
): Promise<Harness> {
  const factory =
    opts.factory instanceof ScriptedSamplerFactory
      ? opts.factory
      : new ScriptedSamplerFactory((m) => (m.startsWith('Qwen') ? 'qwen3_instruct' : 'role_colon'), opts.script ?? echoScript, opts.delayMs ?? 0);
  let store: StoreServer | null = null;
  let dir = '';
  if (opts.withStore) {
    dir = mkdtempSync(path.join(tmpdir(), 'agl-proxy-test-'));
    store = await startStoreWithGateway({ dbPath: path.join(dir, 'store.sqlite'), port: 0, log: () => {} });
  }
  const proxy = await startProxy({
    port: 0,
    log: () => {},
    ...opts,
    factory,
    sink: store ? new StoreSpanSink(store.url) : (opts.sink ?? null),
    initialPolicy: opts.initial === null ? undefined : (opts.initial ?? policy()),
  });
  return {
    proxy,
    factory,
    store,
    async close() {
      await proxy.close();
      if (store) await store.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; json: any; text: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* SSE or empty */
  }
  return { status: res.status, headers: res.headers, json, text };
}

/**
 * Samplers that answer "from <target>" (the sampler path, else the base model), so an answer names the policy that
 * gave it. `calls` lists the target of every sample call; a target in `gates` waits for its gate first;
 * `createDelayMs` slows sampler creation (to make concurrent first calls overlap).
 */
export class TargetSamplerFactory extends ScriptedSamplerFactory {
  readonly calls: string[] = [];
  readonly gates = new Map<string, Promise<void>>();
  constructor(private readonly createDelayMs = 0) {
    super(() => 'role_colon', () => '');
  }

  override async create(target: SamplerTarget, modelName: string): Promise<Sampler> {
    this.created.push(target);
    if (this.createDelayMs) await new Promise((r) => setTimeout(r, this.createDelayMs));
    const name = target.samplerPath ?? target.baseModel!;
    const inner = new ScriptedSampler(target.baseModel ?? modelName, 'role_colon', () => `from ${name}`);
    return {
      sample: async (prompt, params) => {
        this.calls.push(name);
        await this.gates.get(name);
        return inner.sample(prompt, params);
      },
    };
  }

  /** Holds every call on `target` until the returned function is called. */
  gate(target: string): () => void {
    let open!: () => void;
    this.gates.set(target, new Promise<void>((r) => (open = r)));
    return () => {
      this.gates.delete(target);
      open();
    };
  }
}

/** The events of a named SSE stream (`event: <type>` then `data: <json>`, as Responses and Messages stream), checking each name. */
export function namedEvents(text: string): any[] {
  return text
    .trim()
    .split('\n\n')
    .map((block) => {
      const [ev, data] = block.split('\n');
      const json = JSON.parse(data!.slice('data: '.length));
      if (ev !== `event: ${json.type}`) throw new Error(`event line ${JSON.stringify(ev)} does not name its data's type ${json.type}`);
      return json;
    });
}

/** A 400 in OpenAI's error format with the message and the param named. */
export async function assertOpenAiBadRequest(url: string, body: unknown, message: RegExp, param: string | null): Promise<void> {
  const r = await post(url, body);
  assert.equal(r.status, 400, r.text);
  assert.match(r.json.error.message, message);
  assert.equal(r.json.error.type, 'invalid_request_error');
  assert.equal(r.json.error.param, param);
}
