// A reader for Python literals (what ast.literal_eval accepts, minus sets, complex numbers and
// operators): the LiteLLM proxy stores raw request/response fields as Python str() of dicts and
// lists, e.g. "[{'index': 0, 'token_ids': [1, 2]}]", and LlmProxyTraceToTriplet evaluates them.

class Reader {
  pos = 0;
  constructor(readonly text: string) {}

  fail(what: string): never {
    throw new SyntaxError(`python literal: ${what} at ${this.pos}`);
  }

  skipSpace(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos]!)) this.pos++;
  }

  peek(): string {
    this.skipSpace();
    return this.text[this.pos] ?? '';
  }

  expect(ch: string): void {
    if (this.peek() !== ch) this.fail(`expected '${ch}'`);
    this.pos++;
  }

  value(): unknown {
    const c = this.peek();
    if (c === '[') return this.sequence('[', ']');
    if (c === '(') return this.sequence('(', ')');
    if (c === '{') return this.dict();
    if (c === "'" || c === '"') return this.string();
    if ((c === 'b' || c === 'u' || c === 'r') && (this.text[this.pos + 1] === "'" || this.text[this.pos + 1] === '"')) {
      this.fail('prefixed strings are not supported');
    }
    if (/[-+0-9.]/.test(c)) return this.number();
    for (const [word, v] of [['True', true], ['False', false], ['None', null]] as const) {
      if (this.text.startsWith(word, this.pos) && !/[A-Za-z0-9_]/.test(this.text[this.pos + word.length] ?? '')) {
        this.pos += word.length;
        return v;
      }
    }
    return this.fail('unexpected input');
  }

  sequence(open: string, close: string): unknown[] {
    this.expect(open);
    const out: unknown[] = [];
    while (this.peek() !== close) {
      out.push(this.value());
      if (this.peek() === ',') this.pos++;
      else if (this.peek() !== close) this.fail(`expected ',' or '${close}'`);
    }
    this.pos++;
    return out;
  }

  dict(): Record<string, unknown> {
    this.expect('{');
    const out: Record<string, unknown> = {};
    while (this.peek() !== '}') {
      const key = this.value();
      if (typeof key !== 'string' && typeof key !== 'number') this.fail('unsupported dict key');
      this.expect(':');
      Object.defineProperty(out, String(key), { value: this.value(), enumerable: true, writable: true, configurable: true });
      if (this.peek() === ',') this.pos++;
      else if (this.peek() !== '}') this.fail("expected ',' or '}'");
    }
    this.pos++;
    return out;
  }

  number(): number {
    const m = /^[-+]?(?:\d[\d_]*)?(?:\.\d*)?(?:[eE][-+]?\d+)?/.exec(this.text.slice(this.pos));
    if (!m || m[0] === '' || m[0] === '-' || m[0] === '+') this.fail('bad number');
    this.pos += m[0].length;
    const n = Number(m[0].replace(/_/g, ''));
    if (Number.isNaN(n)) this.fail('bad number');
    return n;
  }

  string(): string {
    const quote = this.text[this.pos]!;
    const triple = this.text.startsWith(quote.repeat(3), this.pos);
    const end = triple ? quote.repeat(3) : quote;
    this.pos += end.length;
    let out = '';
    while (!this.text.startsWith(end, this.pos)) {
      if (this.pos >= this.text.length) this.fail('unterminated string');
      const ch = this.text[this.pos++]!;
      if (ch !== '\\') {
        out += ch;
        continue;
      }
      const esc = this.text[this.pos++] ?? '';
      const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', '0': '\0', a: '\x07', b: '\b', f: '\f', v: '\v', '\n': '' };
      if (esc in simple) out += simple[esc];
      else if (esc === 'x' || esc === 'u' || esc === 'U') {
        const len = esc === 'x' ? 2 : esc === 'u' ? 4 : 8;
        const hex = this.text.slice(this.pos, this.pos + len);
        if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len) this.fail('bad escape');
        out += String.fromCodePoint(parseInt(hex, 16));
        this.pos += len;
      } else out += '\\' + esc; // Python keeps unknown escapes verbatim
    }
    this.pos += end.length;
    return out;
  }
}

/** Parses a Python literal; throws SyntaxError when the text is not one. */
export function parsePythonLiteral(text: string): unknown {
  const r = new Reader(text);
  const v = r.value();
  if (r.peek() !== '') r.fail('trailing input');
  return v;
}

/** `_literal_eval_maybe`: strings that parse become values, everything else is returned as is. */
export function literalEvalMaybe(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return parsePythonLiteral(v);
  } catch {
    return v;
  }
}
