// CRC-32 (IEEE, as zlib: W&B's transaction log) and CRC-32C (Castagnoli: TFRecord), table-driven.
function table(poly: number): Uint32Array {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? poly ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
}

function crcWith(t: Uint32Array) {
  /** `seed` continues an earlier checksum, as zlib.crc32(data, seed) does. */
  return (buf: Uint8Array, seed = 0): number => {
    let c = (seed ^ 0xffffffff) >>> 0;
    for (const b of buf) c = t[(c ^ b) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
}

export const crc32 = crcWith(table(0xedb88320));
export const crc32c = crcWith(table(0x82f63b78));
