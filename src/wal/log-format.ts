/**
 * LevelDB's log format (doc/log_format.md), shared by log-writer.ts and log-reader.ts; used for
 * the WAL (`NNNNNN.log`) and the MANIFEST. See docs/format.md.
 *
 * The file is a sequence of 32 KiB blocks. A record is stored as one or more fragments, each with
 * a 7-byte header: masked crc32c (fixed32) of the type byte and the payload, payload length
 * (fixed16), type. A fragment never spans blocks: a record that does not fit is split FIRST,
 * MIDDLE…, LAST; one that fits is FULL. A block tail shorter than a header is zero-filled.
 */

/** Persisted: the block size. Never change. */
export const LOG_BLOCK_SIZE = 32768;
/** Persisted: checksum (4) + length (2) + type (1). */
export const LOG_HEADER_SIZE = 7;

/** Persisted fragment types: never renumber. 0 is reserved for preallocated (zeroed) space. */
export const RecordType = {
  ZERO: 0,
  FULL: 1,
  FIRST: 2,
  MIDDLE: 3,
  LAST: 4,
} as const;
export type RecordType = (typeof RecordType)[keyof typeof RecordType];
export const MAX_RECORD_TYPE = RecordType.LAST;
