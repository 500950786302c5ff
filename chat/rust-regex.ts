// A pre-tokenizer split pattern of the Rust tokenizers (HF `tokenizers` runs tokenizer.json's Split regexes in
// Oniguruma, tiktoken in fancy-regex) rewritten so that a JavaScript RegExp (flag u or v) has the same character
// classes. Two of them differ as written:
//   \s  Rust: the White_Space property (U+0085 NEL included). JavaScript: WhiteSpace and LineTerminator, which
//       add U+FEFF (BOM) and leave out U+0085. Written as \p{White_Space} (\S as \P{White_Space}), also in classes.
//   (?i:'s|'t|...)  Rust folds case by Unicode simple case folding, so s also matches U+017F (ſ) and k U+212A
//       (Kelvin sign); Node 20 has no scoped flags, so each letter becomes a class of the letters it folds with.
// \p{L}, \p{N}, \p{M}, \p{P}, \p{S} (general categories) mean the same in both, up to the Unicode version of the
// tables: Node 20.20 has Unicode 17.0, HF tokenizers 0.23.3's Oniguruma 16.0, so the 4,803 characters Unicode 17
// added (unassigned there) are classed otherwise in tokenizer.json patterns; tiktoken and tml-renderers agree
// with Node on them. test/chat/pretokenizer-classes.test.ts checks every tokenizer of the repository against the
// Rust ones on whitespace and format characters.

/** Non-ASCII letters whose simple case folding is an ASCII letter (CaseFolding.txt): ſ -> s, K (Kelvin) -> k. */
const FOLDS_TO_ASCII: Readonly<Record<string, string>> = { s: '\u017f', k: '\u212a' };

/** The letters a case-insensitive Rust regex matches for one ASCII letter, as a JavaScript class. */
function foldClass(letter: string): string {
  const lower = letter.toLowerCase();
  return `[${lower}${lower.toUpperCase()}${FOLDS_TO_ASCII[lower] ?? ''}]`;
}

/** A scoped `(?i:...)` group of literal alternatives (contractions) without the flag: letters become classes. */
function caseFolded(body: string, pattern: string): string {
  if (/[\\()[\]{}.*+?^$]/.test(body)) throw new Error(`split pattern ${JSON.stringify(pattern)}: only literal alternatives are supported in (?i:...)`);
  return '(?:' + body.replace(/[A-Za-z]/g, foldClass) + ')';
}

/** The pattern with Rust's \s, \S and (?i:...) spelled out for JavaScript; other escapes are copied as they are. */
export function jsClasses(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\') {
      const next = pattern[i + 1] ?? '';
      out += next === 's' ? '\\p{White_Space}' : next === 'S' ? '\\P{White_Space}' : ch + next;
      i++;
    } else if (pattern.startsWith('(?i:', i)) {
      const end = pattern.indexOf(')', i);
      if (end < 0) throw new Error(`split pattern ${JSON.stringify(pattern)}: unclosed (?i:`);
      out += caseFolded(pattern.slice(i + 4, end), pattern);
      i = end;
    } else out += ch;
  }
  return out;
}
