// The hello task's prompt and reward, free of any client: imported by the runner agent (hello.ts) and by agent
// workflows (ai-sdk/workflows.ts), whose bundle must stay deterministic.

export function helloPrompt(task: string): string {
  return `Let's play a game. Say you are ${task}.`;
}

/** The seed's reward, on the lower-cased answer. */
export function helloReward(task: string, answer: string): number {
  const text = answer.toLowerCase();
  if (text.includes(`i am ${task}`) || text.includes(`i'm ${task}`)) return 1;
  if (text.includes(`not ${task}`)) return -1;
  return 0;
}
