// A tiktoken-style BPE tokenizer (Kimi K2 / K2.5 / K2.6 ship one): a `tiktoken.model` file of
// "<base64 token bytes> <rank>" lines, a pre-tokenizer regex, and special tokens numbered right after the ranks.
// Encoding is tiktoken's `encode(text, allowed_special="all")`: special-token strings anywhere become their ids,
// the rest is split by the regex and each piece merged pairwise by lowest rank. Decoding joins raw bytes.
import { encodeAroundSpecials } from './special-split';
import { readFileSync } from 'node:fs';
import { jsClasses } from './rust-regex';
import type { Tokenizer } from './types';

export interface TiktokenOptions {
  name: string;
  /** Python-regex pattern (fancy-regex syntax); translated for JavaScript by `jsPattern`. */
  pattern: string;
  /** Special token text -> id. */
  specialTokens: Map<string, number>;
  bosToken: string | null;
  eosToken: string | null;
}

/**
 * The pattern in JavaScript's `v`-flag syntax: `\p{Han}` as a script, `[A&&[^B]]` as `[A--B]`, and the Rust
 * character classes of rust-regex.ts (`\s` as White_Space, `(?i:'s|...)` spelled out with Unicode case folding).
 */
export function jsPattern(py: string): string {
  return jsClasses(py)
    .replace(/\\p\{Han\}/g, '\\p{Script=Han}')
    .replace(/\[((?:\\p\{[A-Za-z=_]+\})+)&&\[\^(\\p\{Script=Han\})\]\]/g, '[[$1]--[$2]]');
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const keyOf = (b: Uint8Array): string => Buffer.from(b).toString('latin1');

export class TiktokenTokenizer implements Tokenizer {
  readonly name: string;
  readonly bosToken: string | null;
  readonly eosToken: string | null;
  private readonly ranks = new Map<string, number>();
  private readonly idToBytes: Uint8Array[] = [];
  private readonly special: Map<string, number>;
  private readonly specialRegex: RegExp | null;
  private readonly splitRegex: RegExp;
  private readonly cache = new Map<string, number[]>();

  constructor(ranks: Iterable<[Uint8Array, number]>, opts: TiktokenOptions) {
    this.name = opts.name;
    this.bosToken = opts.bosToken;
    this.eosToken = opts.eosToken;
    for (const [bytes, rank] of ranks) {
      this.ranks.set(keyOf(bytes), rank);
      this.idToBytes[rank] = bytes;
    }
    this.special = opts.specialTokens;
    for (const [text, id] of this.special) this.idToBytes[id] = new Uint8Array(Buffer.from(text, 'utf8'));
    const alternatives = [...this.special.keys()].sort((a, b) => b.length - a.length).map(escapeRegex);
    this.specialRegex = alternatives.length ? new RegExp(alternatives.join('|'), 'g') : null;
    this.splitRegex = new RegExp(jsPattern(opts.pattern), 'gv');
  }

  /** Read a `tiktoken.model` file: one "<base64> <rank>" per line. */
  static readRanks(path: string): [Uint8Array, number][] {
    const out: [Uint8Array, number][] = [];
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const [b64, rank] = line.split(' ');
      if (b64 === undefined || rank === undefined) throw new Error(`${path}: bad line ${JSON.stringify(line.slice(0, 80))}`);
      out.push([new Uint8Array(Buffer.from(b64, 'base64')), Number(rank)]);
    }
    return out;
  }

  get vocabSize(): number {
    return this.ranks.size;
  }

  encode(text: string): number[] {
    return encodeAroundSpecials(text, this.specialRegex, this.special, (seg, out) => this.encodeOrdinary(seg, out));
  }

  decode(ids: readonly number[]): string {
    return Buffer.concat(ids.map((id) => this.tokenBytes(id))).toString('utf8');
  }

  tokenBytes(id: number): Uint8Array {
    const b = this.idToBytes[id];
    if (b === undefined) throw new RangeError(`token id ${id} is not in the vocabulary of ${this.name}`);
    return b;
  }

  tokenId(text: string): number | undefined {
    const s = this.special.get(text);
    if (s !== undefined) return s;
    const ids = this.encode(text);
    return ids.length === 1 ? ids[0] : undefined;
  }

  private encodeOrdinary(text: string, out: number[]): void {
    const re = this.splitRegex;
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      if (m[0].length === 0) {
        re.lastIndex++;
        continue;
      }
      let ids = this.cache.get(m[0]);
      if (!ids) {
        ids = this.bytePairEncode(new Uint8Array(Buffer.from(m[0], 'utf8')));
        if (this.cache.size > 100_000) this.cache.clear();
        this.cache.set(m[0], ids);
      }
      for (const id of ids) out.push(id);
    }
  }

  /** tiktoken's merge: repeatedly join the adjacent pair whose joined bytes have the lowest rank (leftmost on ties). */
  private bytePairEncode(piece: Uint8Array): number[] {
    const whole = this.ranks.get(keyOf(piece));
    if (whole !== undefined) return [whole];
    // parts[i] = start offset of the i-th part; a sentinel at the end.
    const starts: number[] = [];
    for (let i = 0; i <= piece.length; i++) starts.push(i);
    const rankOf = (i: number): number => {
      if (i + 2 >= starts.length) return Infinity;
      return this.ranks.get(keyOf(piece.subarray(starts[i]!, starts[i + 2]!))) ?? Infinity;
    };
    for (;;) {
      let best = Infinity;
      let at = -1;
      for (let i = 0; i < starts.length - 2; i++) {
        const r = rankOf(i);
        if (r < best) {
          best = r;
          at = i;
        }
      }
      if (at < 0) break;
      starts.splice(at + 1, 1);
    }
    const ids: number[] = [];
    for (let i = 0; i < starts.length - 1; i++) {
      const r = this.ranks.get(keyOf(piece.subarray(starts[i]!, starts[i + 1]!)));
      if (r === undefined) throw new Error(`${this.name}: no rank for a byte sequence (tiktoken.model lacks single bytes?)`);
      ids.push(r);
    }
    return ids;
  }
}
