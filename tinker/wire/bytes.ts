// Little-endian numeric arrays as raw bytes, the way Tinker's protobuf messages carry them (numpy tobytes).
// Decoders copy first: protobuf byte fields may be unaligned views into a larger buffer.

function aligned(bytes: Uint8Array): ArrayBuffer {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return copy.buffer;
}

export function int32ToBytes(values: ArrayLike<number>): Uint8Array {
  const out = new DataView(new ArrayBuffer(values.length * 4));
  for (let i = 0; i < values.length; i++) out.setInt32(i * 4, values[i], true);
  return new Uint8Array(out.buffer);
}

export function float32ToBytes(values: ArrayLike<number>): Uint8Array {
  const out = new DataView(new ArrayBuffer(values.length * 4));
  for (let i = 0; i < values.length; i++) out.setFloat32(i * 4, values[i], true);
  return new Uint8Array(out.buffer);
}

export function int64ToBytes(values: ArrayLike<number>): Uint8Array {
  const out = new DataView(new ArrayBuffer(values.length * 8));
  for (let i = 0; i < values.length; i++) out.setBigInt64(i * 8, BigInt(Math.trunc(values[i])), true);
  return new Uint8Array(out.buffer);
}

function checkWidth(bytes: Uint8Array, width: number, what: string): void {
  if (bytes.byteLength % width !== 0) throw new Error(`${what}: ${bytes.byteLength} bytes is not a multiple of ${width}`);
}

export function bytesToInt32(bytes: Uint8Array): number[] {
  checkWidth(bytes, 4, 'int32 array');
  const view = new DataView(aligned(bytes));
  const out = new Array<number>(bytes.byteLength / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getInt32(i * 4, true);
  return out;
}

export function bytesToFloat32(bytes: Uint8Array): number[] {
  checkWidth(bytes, 4, 'float32 array');
  const view = new DataView(aligned(bytes));
  const out = new Array<number>(bytes.byteLength / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

export function bytesToInt64(bytes: Uint8Array): number[] {
  checkWidth(bytes, 8, 'int64 array');
  const view = new DataView(aligned(bytes));
  const out = new Array<number>(bytes.byteLength / 8);
  for (let i = 0; i < out.length; i++) out[i] = Number(view.getBigInt64(i * 8, true));
  return out;
}

/** bfloat16 is the upper half of a float32. */
export function bytesToBfloat16(bytes: Uint8Array): number[] {
  checkWidth(bytes, 2, 'bfloat16 array');
  const view = new DataView(aligned(bytes));
  const f = new DataView(new ArrayBuffer(4));
  const out = new Array<number>(bytes.byteLength / 2);
  for (let i = 0; i < out.length; i++) {
    f.setUint32(0, view.getUint16(i * 2, true) << 16, false);
    out[i] = f.getFloat32(0, false);
  }
  return out;
}

/** protobufjs gives int64 fields as numbers or Long objects. */
export function toNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return Number(v);
  if (v && typeof (v as { toNumber?: unknown }).toNumber === 'function') return (v as { toNumber(): number }).toNumber();
  return Number(v);
}
