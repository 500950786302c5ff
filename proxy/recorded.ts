// The internal answer recorded in a call's span, for a client's retry of that call (replay.ts rebuilds the
// chat completion; this reads it as the internal answer every API prints, with the stop string that ended
// each choice).
import type { Tokenizer } from '../chat';
import type { Span } from '../store/types';
import type { InternalAnswer } from './answer';
import { completionFromSpan } from './replay';

export const stopSequenceAttribute = (choice: number) => `agl.completion.${choice}.stop_sequence`;

export function answerFromSpan(span: Span, tokenizer: Tokenizer): InternalAnswer | null {
  const c = completionFromSpan(span, tokenizer);
  if (!c) return null;
  return {
    id: c.id,
    model: c.model,
    created: c.created,
    promptTokenIds: c.prompt_token_ids,
    choices: c.choices.map((ch) => {
      const stop = span.attributes[stopSequenceAttribute(ch.index)];
      return {
        index: ch.index,
        message: ch.message,
        finishReason: ch.finish_reason,
        stopSequence: typeof stop === 'string' ? stop : null,
        tokenIds: ch.token_ids,
        logprobs: ch.logprobs.content,
      };
    }),
  };
}
