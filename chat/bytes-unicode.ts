// GPT-2 byte-level BPE alphabet: every byte maps to one printable Unicode character.

function build(): { byteToChar: string[]; charToByte: Map<string, number> } {
  const bs: number[] = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = bs.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n);
      n++;
    }
  }
  const byteToChar: string[] = new Array(256);
  const charToByte = new Map<string, number>();
  bs.forEach((b, i) => {
    const c = String.fromCharCode(cs[i]);
    byteToChar[b] = c;
    charToByte.set(c, b);
  });
  return { byteToChar, charToByte };
}

export const { byteToChar, charToByte } = build();
