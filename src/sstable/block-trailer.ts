/**
 * The 5-byte trailer after every block of a table (LevelDB's table/format):
 *
 *   type (1 byte: CompressionType) ‖ fixed32 masked crc32c(stored contents ‖ type byte)
 *
 * The checksum covers the block as stored (compressed, if it is) plus the type byte, and is
 * masked (crc32c.ts). `decodeBlockContents` is the read path for one block: verify the trailer,
 * then decompress; every failure is CORRUPTION naming the file and the block's offset.
 */
import { corruption } from '../errors.js';
import { getFixed32, putFixed32 } from '../format/coding.js';
import { crc32c, crc32cExtendByte, maskCrc, unmaskCrc } from '../format/crc32c.js';
import { type CompressionType, decompressBlock, DEFAULT_MAX_UNCOMPRESSED_BLOCK_SIZE } from './compression.js';

/** Persisted: type byte + fixed32 checksum. Never change. */
export const BLOCK_TRAILER_SIZE = 5;

/** The masked checksum stored for `data[start, end)` followed by the type byte `type`. */
export function blockChecksum(data: Uint8Array, start: number, end: number, type: number): number {
  return maskCrc(crc32cExtendByte(crc32c(data, start, end), type));
}

/**
 * Writes the trailer for the stored block `contents[start, end)` with `type` at
 * `dst[off, off + 5)`; returns `off + 5`.
 */
export function writeBlockTrailer(
  dst: Uint8Array,
  off: number,
  contents: Uint8Array,
  start: number,
  end: number,
  type: CompressionType,
): number {
  dst[off] = type;
  return putFixed32(dst, off + 1, blockChecksum(contents, start, end, type));
}

/**
 * Checks the trailer of the block stored at `buf[start, start + size)` (trailer at
 * `buf[start + size, start + size + 5)`) and returns its type byte. `fileOffset` is the block's
 * offset in `file`, for errors. CORRUPTION if the bytes are short or the checksum differs.
 */
export function verifyBlockTrailer(
  buf: Uint8Array,
  start: number,
  size: number,
  file?: string,
  fileOffset?: number,
): number {
  if (buf.length - start < size + BLOCK_TRAILER_SIZE) {
    throw corruption('truncated block read', { file, offset: fileOffset });
  }
  const type = buf[start + size]!;
  const stored = unmaskCrc(getFixed32(buf, start + size + 1));
  const actual = crc32cExtendByte(crc32c(buf, start, start + size), type);
  if (stored !== actual) throw corruption('block checksum mismatch', { file, offset: fileOffset });
  return type;
}

/**
 * The read path for one block: `buf[start, start + size + 5)` holds the stored block and its
 * trailer (as read for a BlockHandle). Verifies the checksum (unless `verifyChecksum` is false)
 * and returns the uncompressed contents: a view of `buf` for an uncompressed block (borrowed:
 * as long as `buf` lives), an owned array otherwise.
 */
export function decodeBlockContents(
  buf: Uint8Array,
  start: number,
  size: number,
  file?: string,
  fileOffset?: number,
  verifyChecksum = true,
  maxUncompressedSize: number = DEFAULT_MAX_UNCOMPRESSED_BLOCK_SIZE,
): Uint8Array {
  let type: number;
  if (verifyChecksum) {
    type = verifyBlockTrailer(buf, start, size, file, fileOffset);
  } else {
    if (buf.length - start < size + BLOCK_TRAILER_SIZE) {
      throw corruption('truncated block read', { file, offset: fileOffset });
    }
    type = buf[start + size]!;
  }
  return decompressBlock(type, buf.subarray(start, start + size), file, fileOffset, maxUncompressedSize);
}
