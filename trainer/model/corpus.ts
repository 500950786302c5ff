// Synthetic supervised corpora for the base models. Each example is a role_colon dialogue prefix (the
// prompt) and the assistant's reply ending in "\n\nUser:" (the stop string), as the cookbook's
// build_supervised_example renders it. The corpus teaches the format and the answer *forms*; which form
// earns reward is left to RL.
import { Rng } from './rng';

export interface Example {
  prompt: string; // rendered dialogue up to and including "Assistant:"
  completion: string; // " reply\n\nUser:"
}

export type CorpusGen = (rng: Rng) => Example;

/** A non-negative integer with 1-4 digits, each length about equally likely. */
export function randomNumber(rng: Rng): number {
  const digits = 1 + rng.int(4);
  const lo = digits === 1 ? 0 : 10 ** (digits - 1);
  return lo + rng.int(10 ** digits - lo);
}

/** A number whose text neither starts with nor is a prefix of n's, so " I am M." never scores as " I am N.". */
function otherNumber(rng: Rng, n: number): number {
  for (;;) {
    const m = randomNumber(rng);
    const a = String(n);
    const b = String(m);
    if (!a.startsWith(b) && !b.startsWith(a)) return m;
  }
}

export function rolePrompt(user: string): string {
  return `User: ${user}\n\nAssistant:`;
}

/**
 * Reply forms for the hello task, with weights; about 23% say exactly "I am N" / "I'm N". " I am M."
 * (another number) is kept rare: after " I am " the base model should mostly copy, or RL spends its
 * first batches unlearning random digits.
 */
const HELLO_FORMS: Array<[number, (n: number, rng: Rng) => string]> = [
  [15, (n) => ` I am ${n}.`],
  [7, (n) => ` I'm ${n}.`],
  [15, (n) => ` I am not ${n}.`],
  [10, (n) => ` I'm not ${n}.`],
  [6, (n, rng) => ` I am ${otherNumber(rng, n)}.`],
  [16, () => ' Hello there!'],
  [11, () => " Sure, let's play."],
  [14, () => ' OK.'],
];

function pickWeighted<T>(rng: Rng, items: Array<[number, T]>): T {
  const total = items.reduce((s, [w]) => s + w, 0);
  let r = rng.next() * total;
  for (const [w, x] of items) {
    r -= w;
    if (r < 0) return x;
  }
  return items[items.length - 1][1];
}

export const helloCorpus: CorpusGen = (rng) => {
  const n = randomNumber(rng);
  const reply = pickWeighted(rng, HELLO_FORMS)(n, rng);
  return { prompt: rolePrompt(`Let's play a game. Say you are ${n}.`), completion: `${reply}\n\nUser:` };
};

/**
 * The system turn role_colon_tools renders for the AI SDK example's hello agent (agents/examples/ai-sdk/workflows.ts:
 * its one tool, `greeting`), byte for byte; test/trainer/model/hello-tools-corpus.test.ts checks it against the
 * renderer. local/tiny-hello-tools learns the hello forms after it, so the example's prompts fit and make sense.
 */
export const HELLO_TOOLS_SYSTEM =
  'System: Tools (call one as <tool_call>{"name": ..., "arguments": {...}}</tool_call>):\n' +
  '{"name": "greeting", "description": "How someone introduces themselves.", "parameters": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}\n\n';

/** The hello corpus after the AI SDK example's tool declaration. */
export const helloToolsCorpus: CorpusGen = (rng) => {
  const ex = helloCorpus(rng);
  return { prompt: HELLO_TOOLS_SYSTEM + ex.prompt, completion: ex.completion };
};

/**
 * Guess-the-number dialogues as agents/examples/guess.ts plays them (secret 1..10, "Higher." /
 * "Lower." feedback, up to 4 turns). Guesses are noisy: about half respect the feedback so far, the
 * rest are uniform, so the base model knows the game's format and RL has a strategy to learn.
 * The prompt is the whole dialogue so far; the completion is the next guess.
 */
export const GUESS_INTRO = "I'm thinking of a number from 1 to 10. Guess it.";

export const guessCorpus: CorpusGen = (rng) => {
  const secret = 1 + rng.int(10);
  let lo = 1;
  let hi = 10;
  let text = rolePrompt(GUESS_INTRO);
  const guess = () => (rng.next() < 0.5 && lo <= hi ? lo + rng.int(hi - lo + 1) : 1 + rng.int(10));
  const turns = rng.int(4);
  for (let i = 0; i < turns; i++) {
    const g = guess();
    if (g === secret) break;
    if (g < secret) lo = Math.max(lo, g + 1);
    else hi = Math.min(hi, g - 1);
    text += ` ${g}\n\nUser: ${g < secret ? 'Higher.' : 'Lower.'}\n\nAssistant:`;
  }
  return { prompt: text, completion: ` ${guess()}\n\nUser:` };
};
