// Python `json.dumps(value)` with default settings: separators ", " and ": ", ensure_ascii=True.
// The qwen3 renderers embed tool calls this way, so the tokens match the Python renderers'.

function pyString(s: string, ensureAscii = true): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i];
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (c < 0x20 || (ensureAscii && c > 0x7e)) out += '\\u' + c.toString(16).padStart(4, '0');
    else out += ch;
  }
  return out + '"';
}

function pyNumber(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return 'Infinity';
  if (n === -Infinity) return '-Infinity';
  return JSON.stringify(n);
}

/** `json.dumps(value)`; with ensureAscii false, `json.dumps(value, ensure_ascii=False)` (HF's `tojson`). */
export function pyJsonDumps(value: unknown, ensureAscii = true): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return pyNumber(value);
  if (typeof value === 'string') return pyString(value, ensureAscii);
  if (Array.isArray(value)) return '[' + value.map((v) => pyJsonDumps(v, ensureAscii)).join(', ') + ']';
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return '{' + entries.map(([k, v]) => pyString(k, ensureAscii) + ': ' + pyJsonDumps(v, ensureAscii)).join(', ') + '}';
  }
  throw new TypeError(`cannot serialise ${typeof value} as JSON`);
}
