// zstd for protobuf forward_backward bodies (`proto_compress_fwdbwd`, Content-Encoding: zstd), through the
// reference libzstd compiled to WebAssembly (@bokuweb/zstd-wasm): the same frames the SDK's `zstandard` writes,
// and no native build step. The module is loaded once, on first use.
import { compress, decompress, init } from '@bokuweb/zstd-wasm';

let ready: Promise<void> | undefined;
const loaded = () => (ready ??= init());

/** Level 3, the default of the SDK's `zstandard.ZstdCompressor()`. */
export async function zstdCompress(bytes: Uint8Array): Promise<Uint8Array> {
  await loaded();
  return compress(bytes, 3);
}

/** The decompressed size a zstd frame declares, or undefined when it declares none (or is not a frame). */
export function zstdFrameContentSize(frame: Uint8Array): number | undefined {
  if (frame.byteLength < 5 || frame[0] !== 0x28 || frame[1] !== 0xb5 || frame[2] !== 0x2f || frame[3] !== 0xfd) return undefined;
  const fhd = frame[4];
  const fcsFlag = fhd >> 6;
  const singleSegment = (fhd >> 5) & 1;
  const dictBytes = [0, 1, 2, 4][fhd & 3];
  const fcsBytes = [singleSegment ? 1 : 0, 2, 4, 8][fcsFlag];
  if (fcsBytes === 0) return undefined;
  const at = 5 + (singleSegment ? 0 : 1) + dictBytes;
  if (frame.byteLength < at + fcsBytes) return undefined;
  let size = 0;
  for (let i = fcsBytes - 1; i >= 0; i--) size = size * 256 + frame[at + i];
  return fcsBytes === 2 ? size + 256 : size;
}

/** Decompresses one frame whose declared size is at most `maxBytes` (checked before any memory is taken). */
export async function zstdDecompress(frame: Uint8Array, maxBytes: number): Promise<Uint8Array> {
  const size = zstdFrameContentSize(frame);
  if (size === undefined) throw new RangeError('the zstd body is not a frame that declares its decompressed size');
  if (size > maxBytes) throw new RangeError(`the zstd body decompresses to ${size} bytes, over the limit of ${maxBytes}`);
  await loaded();
  return decompress(frame, { defaultHeapSize: Math.max(size, 1) });
}
