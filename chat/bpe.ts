// Byte-level BPE tokenizer read from a Hugging Face tokenizer.json (Qwen2/3, Llama 3). Encoding follows
// the `tokenizers` pipeline with add_special_tokens=False: split out added tokens, normalize (NFC if the
// file says so), pre-tokenize with the file's split regex, map bytes to the GPT-2 alphabet, apply merges.
// Decoding joins the raw bytes of every token, so it is byte-exact.
import { encodeAroundSpecials } from './special-split';
import { readFileSync } from 'node:fs';
import { byteToChar, charToByte } from './bytes-unicode';
import { jsClasses } from './rust-regex';
import type { Tokenizer } from './types';

export interface TokenizerJson {
  added_tokens: { id: number; content: string; special?: boolean; [field: string]: unknown }[];
  normalizer: { type: string } | null;
  pre_tokenizer: PreTokenizer | null;
  model: { type: string; vocab: Record<string, number>; merges: (string | [string, string])[]; ignore_merges?: boolean };
}

interface PreTokenizer {
  type: string;
  pretokenizers?: PreTokenizer[];
  pattern?: { Regex?: string; String?: string };
  behavior?: string;
}

export interface BpeOptions {
  name: string;
  bosToken: string | null;
  eosToken: string | null;
}

/**
 * The split regexes of the pre-tokenizer, in order, rewritten for JavaScript with the Rust tokenizers' character
 * classes (rust-regex.ts: `\s` as White_Space, `(?i:...)` spelled out): a Sequence of Split (behavior Isolated)
 * steps and a ByteLevel step without its own regex (Qwen, Llama 3, gpt-oss, DeepSeek V3 have this shape).
 */
export function splitRegexesOf(json: TokenizerJson): RegExp[] {
  const pre = json.pre_tokenizer;
  const steps = pre?.type === 'Sequence' ? (pre.pretokenizers ?? []) : pre ? [pre] : [];
  const out: RegExp[] = [];
  for (const p of steps) {
    if (p.type === 'ByteLevel') continue;
    const source = p.type === 'Split' ? p.pattern?.Regex : undefined;
    if (!source || (p.behavior && p.behavior !== 'Isolated')) {
      throw new Error(`tokenizer.json: pre-tokenizer ${p.type}${p.behavior ? ` (${p.behavior})` : ''} is not supported (only Split with a regex, Isolated, and ByteLevel)`);
    }
    out.push(new RegExp(jsClasses(source), 'gu'));
  }
  if (out.length === 0) throw new Error('tokenizer.json: expected a Sequence pre-tokenizer with a Split regex');
  return out;
}

/** Splits text at a regex's matches, keeping matches and the text between them as pieces (HF Isolated). */
function splitIsolated(text: string, re: RegExp): string[] {
  const out: string[] = [];
  re.lastIndex = 0;
  let last = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    if (m.index > last) out.push(text.slice(last, m.index));
    out.push(m[0]);
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export class BpeTokenizer implements Tokenizer {
  readonly name: string;
  readonly bosToken: string | null;
  readonly eosToken: string | null;
  private readonly vocab = new Map<string, number>();
  private readonly idToBytes: Uint8Array[] = [];
  private readonly ranks = new Map<string, number>();
  private readonly added = new Map<string, number>();
  private readonly addedRegex: RegExp | null;
  /** Added tokens that are not special (`<think>` in Qwen3): still matched when specials are taken literally. */
  private readonly plainAddedRegex: RegExp | null;
  private readonly splitRegexes: RegExp[];
  private readonly nfc: boolean;
  private readonly ignoreMerges: boolean;
  private readonly cache = new Map<string, number[]>();

  constructor(json: TokenizerJson, opts: BpeOptions) {
    if (json.model.type !== 'BPE') throw new Error(`tokenizer.json: model type ${json.model.type} is not BPE`);
    this.name = opts.name;
    this.bosToken = opts.bosToken;
    this.eosToken = opts.eosToken;
    // DeepSeek's vocab also lists its added tokens (not byte-level): they are read from added_tokens below.
    const addedContents = new Set(json.added_tokens.map((t) => t.content));
    for (const [tok, id] of Object.entries(json.model.vocab)) {
      if (addedContents.has(tok)) continue;
      this.vocab.set(tok, id);
      const bytes = new Uint8Array(tok.length);
      for (let i = 0; i < tok.length; i++) {
        const b = charToByte.get(tok[i]);
        if (b === undefined) throw new Error(`tokenizer.json: token ${JSON.stringify(tok)} is not byte-level`);
        bytes[i] = b;
      }
      this.idToBytes[id] = bytes;
    }
    json.model.merges.forEach((m, rank) => {
      const [a, b] = typeof m === 'string' ? (m.split(' ') as [string, string]) : m;
      this.ranks.set(a + ' ' + b, rank);
    });
    for (const t of json.added_tokens) {
      this.added.set(t.content, t.id);
      this.idToBytes[t.id] = new Uint8Array(Buffer.from(t.content, 'utf8'));
    }
    const regexOf = (tokens: string[]) => {
      const alternatives = tokens.sort((x, y) => y.length - x.length).map(escapeRegex);
      return alternatives.length ? new RegExp(alternatives.join('|'), 'g') : null;
    };
    this.addedRegex = regexOf([...this.added.keys()]);
    this.plainAddedRegex = regexOf(json.added_tokens.filter((t) => t.special === false).map((t) => t.content));
    this.splitRegexes = splitRegexesOf(json);
    this.nfc = json.normalizer?.type === 'NFC';
    this.ignoreMerges = json.model.ignore_merges === true;
  }

  static fromFile(path: string, opts: BpeOptions): BpeTokenizer {
    return new BpeTokenizer(JSON.parse(readFileSync(path, 'utf8')) as TokenizerJson, opts);
  }

  encode(text: string): number[] {
    return this.encodeWith(text, this.addedRegex);
  }

  encodeLiteralSpecials(text: string): number[] {
    return this.encodeWith(text, this.plainAddedRegex);
  }

  private encodeWith(text: string, addedRegex: RegExp | null): number[] {
    return encodeAroundSpecials(text, addedRegex, this.added, (seg, out) => this.encodeOrdinary(seg, out));
  }

  decode(ids: readonly number[]): string {
    // transformers 5 decodes fast tokenizers without clean_up_tokenization, whatever tokenizer_config says.
    return Buffer.concat(ids.map((id) => this.tokenBytes(id))).toString('utf8');
  }

  tokenBytes(id: number): Uint8Array {
    const b = this.idToBytes[id];
    if (b === undefined) throw new RangeError(`token id ${id} is not in the vocabulary of ${this.name}`);
    return b;
  }

  tokenId(text: string): number | undefined {
    const added = this.added.get(text);
    if (added !== undefined) return added;
    const ids = this.encode(text);
    return ids.length === 1 ? ids[0] : undefined;
  }

  /** The pieces the pre-tokenizer cuts text without added tokens into (normalized first), before the merges. */
  preTokenize(segment: string): string[] {
    let pieces = [this.nfc ? segment.normalize('NFC') : segment];
    for (const re of this.splitRegexes) pieces = pieces.flatMap((p) => splitIsolated(p, re));
    return pieces;
  }

  private encodeOrdinary(segment: string, out: number[]): void {
    for (const p of this.preTokenize(segment)) this.encodeWord(p, out);
  }

  private encodeWord(word: string, out: number[]): void {
    let ids = this.cache.get(word);
    if (!ids) {
      ids = this.bpe(word);
      if (this.cache.size > 100_000) this.cache.clear();
      this.cache.set(word, ids);
    }
    for (const id of ids) out.push(id);
  }

  private bpe(word: string): number[] {
    let mapped = '';
    for (const b of Buffer.from(word, 'utf8')) mapped += byteToChar[b];
    if (this.ignoreMerges) {
      const whole = this.vocab.get(mapped);
      if (whole !== undefined) return [whole];
    }
    let symbols = Array.from(mapped);
    while (symbols.length > 1) {
      let best = Infinity;
      let pair = '';
      for (let i = 0; i < symbols.length - 1; i++) {
        const key = symbols[i] + ' ' + symbols[i + 1];
        const r = this.ranks.get(key);
        if (r !== undefined && r < best) {
          best = r;
          pair = key;
        }
      }
      if (best === Infinity) break;
      const next: string[] = [];
      for (let i = 0; i < symbols.length; i++) {
        if (i < symbols.length - 1 && symbols[i] + ' ' + symbols[i + 1] === pair) {
          next.push(symbols[i] + symbols[i + 1]);
          i++;
        } else next.push(symbols[i]);
      }
      symbols = next;
    }
    return symbols.map((s) => {
      const id = this.vocab.get(s);
      if (id === undefined) throw new Error(`${this.name}: no token for ${JSON.stringify(s)}`);
      return id;
    });
  }
}
