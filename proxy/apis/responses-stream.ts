// A finished response re-emitted as the Responses event stream (pure; the sampler is not incremental):
// response.created, response.in_progress, then per output item its added / delta / done events, then
// response.completed (or response.incomplete) carrying the whole response, token ids included.
import { pieces, sse } from './api';
import type { Obj } from './fields';

export function responseEvents(response: Obj): string[] {
  const out: string[] = [];
  let seq = 0;
  const emit = (type: string, fields: Obj) => out.push(sse({ type, sequence_number: seq++, ...fields }, type));
  const pending = { ...response, status: 'in_progress', output: [], usage: null, incomplete_details: null, token_ids: undefined, token_logprobs: undefined };
  emit('response.created', { response: pending });
  emit('response.in_progress', { response: pending });
  (response.output as Obj[]).forEach((item, output_index) => {
    const item_id = item.id as string;
    if (item.type === 'message') {
      const part = (item.content as Obj[])[0]!;
      const text = part.text as string;
      emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      emit('response.content_part.added', { item_id, output_index, content_index: 0, part: { ...part, text: '' } });
      for (const delta of pieces(text)) emit('response.output_text.delta', { item_id, output_index, content_index: 0, delta, logprobs: [] });
      emit('response.output_text.done', { item_id, output_index, content_index: 0, text, logprobs: [] });
      emit('response.content_part.done', { item_id, output_index, content_index: 0, part });
    } else if (item.type === 'reasoning') {
      const part = (item.content as Obj[])[0]!;
      const text = part.text as string;
      emit('response.output_item.added', { output_index, item: { ...item, content: [] } });
      emit('response.content_part.added', { item_id, output_index, content_index: 0, part: { ...part, text: '' } });
      for (const delta of pieces(text)) emit('response.reasoning_text.delta', { item_id, output_index, content_index: 0, delta });
      emit('response.reasoning_text.done', { item_id, output_index, content_index: 0, text });
      emit('response.content_part.done', { item_id, output_index, content_index: 0, part });
    } else {
      emit('response.output_item.added', { output_index, item: { ...item, arguments: '', status: 'in_progress' } });
      emit('response.function_call_arguments.delta', { item_id, output_index, delta: item.arguments });
      emit('response.function_call_arguments.done', { item_id, output_index, name: item.name, arguments: item.arguments });
    }
    emit('response.output_item.done', { output_index, item });
  });
  emit(response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
  return out;
}
