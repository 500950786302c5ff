// A multi-turn example: guess a secret number from 1 to 10 with "Higher." / "Lower." feedback. Reward 1 when
// found within the allowed turns (more for fewer turns), 0 otherwise. Each turn is one chat call that carries the
// whole conversation, so the trainer sees turns that extend each other (multi-turn prefix merging).
import OpenAI from 'openai';
import type { AgentFunction } from '../runner';

export interface GuessTask {
  secret: number;
  maxTurns?: number;
}

export const GUESS_INTRO = "I'm thinking of a number from 1 to 10. Guess it.";

/** The first integer in the answer, if any. */
export function parseGuess(answer: string): number | null {
  const m = answer.match(/-?\d+/);
  return m ? Number(m[0]) : null;
}

export function feedback(secret: number, guess: number | null): 'Correct!' | 'Higher.' | 'Lower.' | 'Say a number.' {
  if (guess === null) return 'Say a number.';
  return guess === secret ? 'Correct!' : guess < secret ? 'Higher.' : 'Lower.';
}

/** 1 for a first-turn hit, decreasing by turn; 0 when never found. */
export function guessReward(turnFound: number | null, maxTurns: number): number {
  return turnFound === null ? 0 : 1 - (turnFound - 1) / (2 * maxTurns);
}

export const guessAgent: AgentFunction<GuessTask> = async (task, ctx) => {
  if (!ctx.llm) throw new Error('the rollout carries no LLM resource');
  const maxTurns = task.maxTurns ?? 4;
  const client = new OpenAI({ baseURL: ctx.llm.endpoint, apiKey: ctx.llm.apiKey ?? 'dummy', timeout: 120_000, maxRetries: 2 });
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: GUESS_INTRO }];
  for (let turn = 1; turn <= maxTurns; turn++) {
    const res = await client.chat.completions.create({ model: ctx.llm.model, messages }, { signal: ctx.signal });
    const answer = res.choices[0]?.message.content ?? '';
    const reply = feedback(task.secret, parseGuess(answer));
    if (reply === 'Correct!') return guessReward(turn, maxTurns);
    messages.push({ role: 'assistant', content: answer }, { role: 'user', content: reply });
  }
  return guessReward(null, maxTurns);
};
