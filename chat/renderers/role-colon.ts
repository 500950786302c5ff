// role_colon: "System: ...\n\nUser: ...\n\nAssistant:" for base models; stop string "\n\nUser:".
import type { Message, ParsedResponse, Renderer, Tokenizer } from '../types';

/** Python str.capitalize(): first character upper-cased, the rest lower-cased. */
export function pyCapitalize(s: string): string {
  return s.length === 0 ? s : s[0].toUpperCase() + s.slice(1).toLowerCase();
}

const STOP = '\n\nUser:';

export class RoleColonRenderer implements Renderer {
  readonly name = 'role_colon';
  constructor(readonly tokenizer: Tokenizer) {}

  buildGenerationPrompt(messages: readonly Message[]): number[] {
    const t = this.tokenizer;
    const out: number[] = t.bosToken ? t.encode(t.bosToken) : [];
    for (const m of messages) {
      out.push(...t.encode(pyCapitalize(m.role) + ':'));
      out.push(...t.encode(' ' + m.content + '\n\n'));
    }
    out.push(...t.encode('Assistant:'));
    return out;
  }

  stopSequences(): string[] {
    return [STOP];
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    const text = this.tokenizer.decode(tokens);
    const pieces = text.split(STOP);
    // Python raises on more than one stop string; a server answers with the first piece, not ok.
    return { message: { role: 'assistant', content: pieces[0].trim() }, ok: pieces.length === 2 };
  }
}
