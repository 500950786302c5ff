// The Inkling tokenizer ("o200k_base_chat" in tml-renderers): OpenAI's o200k_base byte-pair ranks (shipped offline
// by the js-tiktoken npm package) and 60 tokens after them that name the parts of a tml_v0 message
// (<|message_user|>, <|content_text|>, <|end_message|>, ...). Text is always encoded as ordinary text
// (tml-renderers' encode_ordinary): a special token's name written in a message stays plain characters. Decoding
// writes a special token as <|name|>, as tml-renderers' decode does. Checked token for token against
// tml-renderers 0.2.1 by test/chat/parity.test.ts.
import o200kBase from 'js-tiktoken/ranks/o200k_base';
import { TiktokenTokenizer } from './tiktoken-bpe';
import type { Tokenizer } from './types';

/** The first id after the ordinary ranks; special_tokens() of tml-renderers lists names from here on. */
const FIRST_SPECIAL = 199998;

/** Special token names by id (the unnamed slots are `unused_<id>`, as tml-renderers names them). */
const NAMED: Readonly<Record<number, string>> = {
  199998: 'unused',
  199999: 'endoftext',
  200000: 'message_user',
  200001: 'message_model',
  200002: 'message_system',
  200003: 'message_tool',
  200004: 'content_text',
  200005: 'content_image',
  200006: 'content_model_end_sampling',
  200008: 'content_thinking',
  200010: 'end_message',
  200020: 'content_audio_input',
  200022: 'content_tool_error',
  200023: 'audio',
  200024: 'content_xml',
  200028: 'begin_of_text',
  200043: 'audio_end',
  200049: 'content_invoke_tool_json',
  200057: 'content_invoke_tool_text',
};
const SPECIAL_COUNT = 60;

export const O200K_CHAT_SPECIALS: ReadonlyMap<number, string> = new Map(
  Array.from({ length: SPECIAL_COUNT }, (_, i) => FIRST_SPECIAL + i).map((id) => [id, NAMED[id] ?? `unused_${id}`]),
);

/** js-tiktoken's compact rank file: lines of "! <first rank> <base64 token> <base64 token> ...". */
function* ranksOf(compact: string): Generator<[Uint8Array, number]> {
  for (const line of compact.split('\n')) {
    if (!line) continue;
    const [, first, ...tokens] = line.split(' ');
    const start = Number(first);
    for (let i = 0; i < tokens.length; i++) yield [new Uint8Array(Buffer.from(tokens[i]!, 'base64')), start + i];
  }
}

let ranks: TiktokenTokenizer | undefined;

/** o200k_base with no specials: every piece of text is ordinary (encode_ordinary). Built once (~200k ranks). */
function o200kBaseOrdinary(): TiktokenTokenizer {
  // '/' must be escaped inside a class under the v flag the tokenizer compiles with.
  const pattern = o200kBase.pat_str.replace('[\\r\\n/]', '[\\r\\n\\/]');
  ranks ??= new TiktokenTokenizer(ranksOf(o200kBase.bpe_ranks), { name: 'o200k_base', pattern, specialTokens: new Map(), bosToken: null, eosToken: null });
  return ranks;
}

export class O200kChatTokenizer implements Tokenizer {
  readonly bosToken = 'begin_of_text';
  readonly eosToken = 'endoftext';
  private readonly ordinary = o200kBaseOrdinary();
  private readonly idsByText = new Map<string, number>();

  constructor(readonly name: string) {
    for (const [id, n] of O200K_CHAT_SPECIALS) this.idsByText.set(`<|${n}|>`, id);
  }

  encode(text: string): number[] {
    return this.ordinary.encode(text);
  }

  decode(ids: readonly number[]): string {
    return Buffer.concat(ids.map((id) => this.tokenBytes(id))).toString('utf8');
  }

  tokenBytes(id: number): Uint8Array {
    const special = O200K_CHAT_SPECIALS.get(id);
    return special !== undefined ? new Uint8Array(Buffer.from(`<|${special}|>`, 'utf8')) : this.ordinary.tokenBytes(id);
  }

  tokenId(text: string): number | undefined {
    return this.idsByText.get(text) ?? this.ordinary.tokenId(text);
  }

  /** The id of a special token by its bare name (`end_message`). */
  special(name: string): number {
    const id = this.idsByText.get(`<|${name}|>`);
    if (id === undefined) throw new Error(`o200k_base_chat has no special token ${name}`);
    return id;
  }
}
