// TFRecord framing, as TensorFlow and TensorBoard write and read event files: per record a little-endian
// uint64 length, the masked CRC-32C of those 8 bytes, the data, and the masked CRC-32C of the data.
import { crc32c } from './crc';

export function maskedCrc32c(buf: Uint8Array): number {
  const c = crc32c(buf);
  return (((c >>> 15) | (c << 17)) + 0xa282ead8) >>> 0;
}

export function frameRecord(data: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + data.length + 4);
  out.writeBigUInt64LE(BigInt(data.length), 0);
  out.writeUInt32LE(maskedCrc32c(out.subarray(0, 8)), 8);
  out.set(data, 12);
  out.writeUInt32LE(maskedCrc32c(data), 12 + data.length);
  return out;
}

/** The records of a file, and where the last whole one ends (a crash mid-write leaves a torn tail after it). */
export function readRecords(buf: Buffer): { records: Buffer[]; end: number } {
  const records: Buffer[] = [];
  let pos = 0;
  while (pos + 12 <= buf.length) {
    const len = Number(buf.readBigUInt64LE(pos));
    if (buf.readUInt32LE(pos + 8) !== maskedCrc32c(buf.subarray(pos, pos + 8))) break;
    if (pos + 12 + len + 4 > buf.length) break;
    const data = buf.subarray(pos + 12, pos + 12 + len);
    if (buf.readUInt32LE(pos + 12 + len) !== maskedCrc32c(data)) break;
    records.push(data);
    pos += 12 + len + 4;
  }
  return { records, end: pos };
}
