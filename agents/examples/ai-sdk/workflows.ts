// Agent workflows written as any `@temporalio/ai-sdk` user writes them: the AI SDK's generateText with the plugin's
// provider, tools, and environment steps as activities. Nothing here knows about training: a training run starts
// them as rollouts (run config `agentWorkflow`), and the worker's model provider decides where model calls go
// (worker.ts). Each returns its reward (the run records a number a workflow returns).
import { temporalProvider } from '@temporalio/ai-sdk';
import { proxyActivities } from '@temporalio/workflow';
import { generateText, jsonSchema, stepCountIs, tool, type ModelMessage } from 'ai';
import { helloPrompt, helloReward } from '../hello-task';
import { feedback, GUESS_INTRO, guessReward, parseGuess, type GuessTask } from '../guess-task';
import type * as activities from './activities';

const { judgeGuess, lookUpGreeting } = proxyActivities<typeof activities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '2 seconds' },
});

const model = () => temporalProvider.languageModel('policy');

/** The hello task with a tool the model may call to learn how people introduce themselves. */
export async function helloAgentWorkflow(name: string): Promise<number> {
  const { text } = await generateText({
    model: model(),
    prompt: helloPrompt(name),
    tools: {
      greeting: tool({
        description: 'How someone introduces themselves.',
        inputSchema: jsonSchema<{ name: string }>({ type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }),
        execute: async ({ name: who }) => lookUpGreeting(who),
      }),
    },
    stopWhen: stepCountIs(3),
  });
  return helloReward(name, text);
}

/** Guess the number, one model call per turn; the environment (the judge) is an activity. */
export async function guessAgentWorkflow(task: GuessTask): Promise<number> {
  const maxTurns = task.maxTurns ?? 4;
  const messages: ModelMessage[] = [{ role: 'user', content: GUESS_INTRO }];
  for (let turn = 1; turn <= maxTurns; turn++) {
    const { text } = await generateText({ model: model(), messages });
    const reply = await judgeGuess(task.secret, parseGuess(text));
    if (reply === 'Correct!') return guessReward(turn, maxTurns);
    messages.push({ role: 'assistant', content: text }, { role: 'user', content: reply });
  }
  return guessReward(null, maxTurns);
}

/** Returns an answer object; its reward comes from a grader activity the run config names (gradeHello). */
export async function helloAnswerWorkflow(name: string): Promise<{ answer: string }> {
  const { text } = await generateText({ model: model(), prompt: helloPrompt(name) });
  return { answer: text };
}

export { feedback };
