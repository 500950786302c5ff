// The one loop both tokenizers share: special (added) tokens matched in the text become their ids, the text between
// them is encoded ordinarily.

export function encodeAroundSpecials(
  text: string,
  specials: RegExp | null,
  ids: ReadonlyMap<string, number>,
  encodeOrdinary: (segment: string, out: number[]) => void,
): number[] {
  const out: number[] = [];
  let last = 0;
  if (specials) {
    specials.lastIndex = 0;
    for (let m = specials.exec(text); m; m = specials.exec(text)) {
      if (m.index > last) encodeOrdinary(text.slice(last, m.index), out);
      out.push(ids.get(m[0])!);
      last = m.index + m[0].length;
    }
  }
  if (last < text.length) encodeOrdinary(text.slice(last), out);
  return out;
}
