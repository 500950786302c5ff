// The agent's activities: its environment steps and its grader. AGL_EXAMPLE_JUDGE_DELAY_MS slows the judge (the
// kill -9 test stops the worker while an episode waits on it).
import { feedback } from '../guess-task';
import { helloReward } from '../hello-task';
import { setTimeout as sleep } from 'node:timers/promises';

export async function lookUpGreeting(name: string): Promise<string> {
  return `People say: I am ${name}.`;
}

export async function judgeGuess(secret: number, guess: number | null): Promise<ReturnType<typeof feedback>> {
  const delay = Number(process.env.AGL_EXAMPLE_JUDGE_DELAY_MS ?? 0);
  if (delay > 0) await sleep(delay);
  return feedback(secret, guess);
}

/** A grader (run config `agentWorkflow.grader: "gradeHello"`): the task and the workflow's result in, the reward out. */
export async function gradeHello(name: string, result: { answer: string }): Promise<number> {
  return helloReward(name, result.answer);
}
