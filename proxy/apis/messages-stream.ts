// A finished message re-emitted as Anthropic's SSE events (pure; the sampler is not incremental): message_start
// (with prompt_token_ids), per content block its start / deltas / stop, then message_delta (stop reason, usage,
// and the token_ids and token_logprobs of the answer) and message_stop.
import { pieces, sse } from './api';
import type { Obj } from './fields';

export function messageEvents(message: Obj): string[] {
  const out: string[] = [];
  const emit = (type: string, fields: Obj = {}) => out.push(sse({ type, ...fields }, type));
  const usage = message.usage as Obj;
  emit('message_start', {
    message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 0 }, token_ids: undefined, token_logprobs: undefined },
  });
  emit('ping');
  (message.content as Obj[]).forEach((block, index) => {
    if (block.type === 'text') {
      emit('content_block_start', { index, content_block: { type: 'text', text: '' } });
      for (const text of pieces(block.text as string)) emit('content_block_delta', { index, delta: { type: 'text_delta', text } });
    } else if (block.type === 'thinking') {
      emit('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      for (const thinking of pieces(block.thinking as string)) emit('content_block_delta', { index, delta: { type: 'thinking_delta', thinking } });
      emit('content_block_delta', { index, delta: { type: 'signature_delta', signature: '' } });
    } else {
      emit('content_block_start', { index, content_block: { ...block, input: {} } });
      emit('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
    }
    emit('content_block_stop', { index });
  });
  emit('message_delta', {
    delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence },
    usage: { output_tokens: usage.output_tokens },
    token_ids: message.token_ids,
    token_logprobs: message.token_logprobs,
  });
  emit('message_stop');
  return out;
}
