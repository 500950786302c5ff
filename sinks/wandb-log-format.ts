// The framing of W&B's transaction log (the run-<id>.wandb file of a run directory; `wandb sync` uploads it,
// `wandb leet inspect` prints it): LevelDB's log format with a 7-byte file header. 32 KiB blocks; each record
// a 7-byte header (CRC-32 of type byte + data, length, type) and its data, split FIRST/MIDDLE/LAST across blocks.
import { crc32 } from './crc';

export const BLOCK = 32768;
const HEADER = 7;
const FULL = 1;
const FIRST = 2;
const MIDDLE = 3;
const LAST = 4;

/** ":W&B", magic 0xBEE1, version 0. */
export const FILE_HEADER = Buffer.from([0x3a, 0x57, 0x26, 0x42, 0xe1, 0xbe, 0x00]);

function chunk(type: number, data: Uint8Array): Buffer {
  const out = Buffer.alloc(HEADER + data.length);
  out.writeUInt32LE(crc32(data, crc32(Buffer.from([type]))) >>> 0, 0);
  out.writeUInt16LE(data.length, 4);
  out.writeUInt8(type, 6);
  out.set(data, HEADER);
  return out;
}

/** The bytes that append `records` to a log whose size is `size` (at least the file header). */
export function frame(records: Uint8Array[], size: number): Buffer {
  const parts: Buffer[] = [];
  let pos = size;
  for (const data of records) {
    let used = 0;
    let first = true;
    while (true) {
      let room = BLOCK - (pos % BLOCK);
      if (room < HEADER) {
        parts.push(Buffer.alloc(room));
        pos += room;
        room = BLOCK;
      }
      const take = Math.min(data.length - used, room - HEADER);
      const last = used + take === data.length;
      const type = first && last ? FULL : first ? FIRST : last ? LAST : MIDDLE;
      parts.push(chunk(type, data.subarray(used, used + take)));
      pos += HEADER + take;
      used += take;
      first = false;
      if (last) break;
    }
  }
  return Buffer.concat(parts);
}

/** The whole records of a log, and where the last one ends (anything after it is a torn write). */
export function unframe(buf: Buffer): { records: Buffer[]; end: number } {
  if (buf.length < FILE_HEADER.length || !buf.subarray(0, FILE_HEADER.length).equals(FILE_HEADER)) {
    throw new Error('not a W&B transaction log (bad file header)');
  }
  const records: Buffer[] = [];
  let pos = FILE_HEADER.length;
  let end = pos;
  let pending: Buffer[] = [];
  while (pos < buf.length) {
    const room = BLOCK - (pos % BLOCK);
    if (room < HEADER) {
      pos += room;
      continue;
    }
    if (pos + HEADER > buf.length) break;
    const len = buf.readUInt16LE(pos + 4);
    const type = buf.readUInt8(pos + 6);
    if (type === 0 && len === 0) {
      // zero padding to the end of the block
      pos += room;
      continue;
    }
    const data = buf.subarray(pos + HEADER, pos + HEADER + len);
    if (data.length < len || buf.readUInt32LE(pos) !== crc32(data, crc32(Buffer.from([type]))) >>> 0) break;
    pos += HEADER + len;
    if (type === FULL) {
      records.push(Buffer.from(data));
      end = pos;
    } else if (type === FIRST) pending = [Buffer.from(data)];
    else if (type === MIDDLE) pending.push(Buffer.from(data));
    else if (type === LAST) {
      records.push(Buffer.concat([...pending, data]));
      pending = [];
      end = pos;
    } else break;
  }
  return { records, end };
}
