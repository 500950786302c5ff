// The guess task's rules and reward, free of any client: imported by the runner agent (guess.ts) and by agent
// workflows (ai-sdk/workflows.ts).

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
