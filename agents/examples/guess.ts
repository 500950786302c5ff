// A multi-turn example: guess a secret number from 1 to 10 with "Higher." / "Lower." feedback. Reward 1 when
// found within the allowed turns (more for fewer turns), 0 otherwise. Each turn is one chat call that carries the
// whole conversation, so the trainer sees turns that extend each other (multi-turn prefix merging).
import OpenAI from 'openai';
import type { AgentFunction } from '../runner';

import { feedback, GUESS_INTRO, guessReward, parseGuess, type GuessTask } from './guess-task';

export { feedback, GUESS_INTRO, guessReward, parseGuess, type GuessTask };

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
