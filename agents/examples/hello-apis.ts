// The hello task through the proxy's other agent APIs: the same question and reward as hello.ts, asked with the
// OpenAI Responses API, Anthropic's Messages API and the legacy Completions API. On the local role_colon model all
// three give the very prompt tokens the chat example gives, so they train alike.
import OpenAI from 'openai';
import type { AgentFunction } from '../runner';
import { helloPrompt, helloReward } from './hello';

const client = (endpoint: string, apiKey: string | null) => new OpenAI({ baseURL: endpoint, apiKey: apiKey ?? 'dummy', timeout: 120_000, maxRetries: 2 });

/** OpenAI Responses (`openai` npm client, `responses.create`). */
export const helloResponsesAgent: AgentFunction<string> = async (task, ctx) => {
  if (!ctx.llm) throw new Error('the rollout carries no LLM resource');
  const res = await client(ctx.llm.endpoint, ctx.llm.apiKey).responses.create({ model: ctx.llm.model, input: helloPrompt(String(task)) }, { signal: ctx.signal });
  return helloReward(String(task), res.output_text);
};

/**
 * Anthropic Messages, spoken over HTTP as Claude-style agents do (`POST /v1/messages`; the `anthropic` SDKs send the
 * same body). Messages requires max_tokens: the example's 24.
 */
export const helloMessagesAgent: AgentFunction<string> = async (task, ctx) => {
  if (!ctx.llm) throw new Error('the rollout carries no LLM resource');
  const res = await fetch(`${ctx.llm.endpoint}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': ctx.llm.apiKey ?? 'dummy' },
    body: JSON.stringify({ model: ctx.llm.model, max_tokens: 24, messages: [{ role: 'user', content: helloPrompt(String(task)) }] }),
    signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(120_000)]),
  });
  const message = (await res.json()) as { content?: { type: string; text?: string }[]; error?: { message: string } };
  if (!res.ok) throw new Error(`Messages API answered ${res.status}: ${message.error?.message}`);
  return helloReward(String(task), (message.content ?? []).map((b) => (b.type === 'text' ? b.text : '')).join(''));
};

/**
 * Legacy Completions: the agent writes the prompt itself, in the format the local base model was trained on, and stops
 * at the next user turn. No chat template is applied, so this is the chat example's prompt, token for token.
 */
export const helloCompletionsAgent: AgentFunction<string> = async (task, ctx) => {
  if (!ctx.llm) throw new Error('the rollout carries no LLM resource');
  const res = await client(ctx.llm.endpoint, ctx.llm.apiKey).completions.create(
    { model: ctx.llm.model, prompt: `User: ${helloPrompt(String(task))}\n\nAssistant:`, max_tokens: 24, stop: ['\n\nUser:'] },
    { signal: ctx.signal },
  );
  return helloReward(String(task), res.choices[0]?.text ?? '');
};
