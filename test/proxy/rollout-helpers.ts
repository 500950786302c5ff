// Rollouts bound to policies, for the policy-by-id tests: the real publishPolicy activity (proxy switch + resources
// carrying `main_llm.agl_policy`), rollouts enqueued in the real store under those resources, and scoped calls.
import assert from 'node:assert/strict';
import { MockActivityEnvironment } from '@temporalio/testing';
import { publishPolicy } from '../../activities/publish-policy';
import type { StoreClient } from '../../store/client';
import type { Span } from '../../store/types';
import type { PolicyState, RunSettings } from '../../shared/run-types';
import { post } from './helpers';

export const MSG = (content = 'hi') => ({ messages: [{ role: 'user', content }] });

/** The settings publishPolicy reads, for a run named `runName` (async: drain-free switches). */
export function runSettings(proxyUrl: string, storeUrl: string, runName: string, async = false): RunSettings {
  return {
    runName,
    modelName: 'local/tiny-hello',
    rendererName: 'role_colon',
    llmProxyRetryAttempts: 0,
    trainTemperature: 1,
    evalTemperature: 0.5,
    topK: -1,
    topP: 1,
    maxTokens: 64,
    proxyUrl,
    storeAddress: storeUrl,
    llmProxyPort: 12306,
    async: async ? { maxStepsOffPolicy: 2, groupsPerBatch: 2 } : null,
  } as unknown as RunSettings;
}

export const samplerPathOf = (run: string, step: number) => `tinker://${run}/sampler_weights/${String(step).padStart(6, '0')}`;

/** Runs the publishPolicy activity for `step` of `run` (batch = step); returns the resources id. */
export async function publish(settings: RunSettings, step: number, purpose: 'train' | 'eval' = 'train'): Promise<string> {
  const policy: PolicyState = { modelId: `${settings.runName}-model`, statePath: `tinker://${settings.runName}/weights/${step}`, samplerPath: samplerPathOf(settings.runName, step), step };
  const env = new MockActivityEnvironment() as unknown as { run(f: unknown, ...a: unknown[]): Promise<unknown> };
  return (await env.run(publishPolicy, settings, step, purpose, policy)) as string;
}

export interface Bound {
  rid: string;
  aid: string;
}

export async function enqueue(store: StoreClient, resourcesId: string | null, task = 't'): Promise<Bound> {
  const r = await store.startRollout({ task }, { resourcesId });
  return { rid: r.rollout_id, aid: r.attempt.attempt_id };
}

export function scopedUrl(proxyUrl: string, r: Bound): string {
  return `${proxyUrl}/rollout/${r.rid}/attempt/${r.aid}/v1/chat/completions`;
}

/** One scoped call that must succeed; returns the sampler target that answered and the policy header. */
export async function ask(proxyUrl: string, r: Bound, content = 'hi', headers: Record<string, string> = {}): Promise<{ from: string; policy: string | null; sequenceId: number }> {
  const res = await post(scopedUrl(proxyUrl, r), MSG(content), headers);
  assert.equal(res.status, 200, res.text);
  const m = /^from (.+)$/.exec(res.json.choices[0].message.content);
  assert.ok(m, `the answer names its sampler: ${res.json.choices[0].message.content}`);
  return { from: m[1], policy: res.headers.get('x-agl-policy'), sequenceId: Number(res.headers.get('x-agl-sequence-id')) };
}

export async function spansOf(store: StoreClient, r: Bound): Promise<Span[]> {
  return (await store.querySpans(r.rid, r.aid)).items;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
