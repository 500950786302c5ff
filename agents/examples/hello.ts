// The seed's hello task: the agent asks the policy to say it is N, and earns 1 for "I am N" / "I'm N",
// -1 for "not N", 0 otherwise. Plain OpenAI-client code: nothing here knows about training.
import OpenAI from 'openai';
import type { AgentFunction } from '../runner';

import { helloPrompt, helloReward } from './hello-task';

export { helloPrompt, helloReward };

/** Asks the policy the hello question once, as any OpenAI-client agent would, and scores the answer. */
function helloAgentWith(reward: (task: string, answer: string) => number): AgentFunction<string> {
  return async (task, ctx) => {
    if (!ctx.llm) throw new Error('the rollout carries no LLM resource');
    const client = new OpenAI({ baseURL: ctx.llm.endpoint, apiKey: ctx.llm.apiKey ?? 'dummy', timeout: 120_000, maxRetries: 2 });
    const res = await client.chat.completions.create(
      { model: ctx.llm.model, messages: [{ role: 'user', content: helloPrompt(String(task)) }] },
      { signal: ctx.signal },
    );
    return reward(String(task), res.choices[0]?.message.content ?? '');
  };
}

export const helloAgent = helloAgentWith(helloReward);

/**
 * The hello reward with partial credit (the share of the target's characters the answer uses), so that even an
 * untrained model gets rewards that differ within a group: the chaos tests need steps that really move the
 * weights on the tiny test model, whose answers almost never earn the sparse reward.
 */
export function helloDenseReward(task: string, answer: string): number {
  const target = new Set(`i am ${task}`);
  const used = new Set(answer.toLowerCase());
  const overlap = [...target].filter((c) => used.has(c)).length / target.size;
  return helloReward(task, answer) + overlap;
}

export const helloDenseAgent = helloAgentWith(helloDenseReward);
