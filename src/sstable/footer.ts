/**
 * Block handles and the two table footers sievekv writes and reads (docs/format.md "Footer"):
 *
 *   BlockHandle = varint64 offset ‖ varint64 size          (at most 20 bytes)
 *
 *   LevelDB's footer (48 bytes; RocksDB's "legacy" footer, which it reads as format_version 0):
 *     metaindex handle ‖ index handle ‖ zero padding to 40 bytes ‖ fixed64 0xdb4775248b80fb57
 *
 *   RocksDB's block-based footer, format_version 2 (53 bytes; RocksDB's table/format.cc):
 *     checksum type (1 byte: 1 = crc32c) ‖ metaindex handle ‖ index handle ‖ zero padding to
 *     41 bytes ‖ fixed32 format_version (2) ‖ fixed64 0x88e241b785f4cff7
 *
 * Why two: the footer tells RocksDB how LZ4 blocks are framed. Under LevelDB's magic it assumes
 * format_version 0, whose LZ4 blocks start with a fixed 8-byte length; sievekv's LZ4 blocks start
 * with a varint32 length, which is RocksDB's framing from format_version 2 on. So LZ4 tables get
 * RocksDB's footer with format_version 2 (which otherwise keeps LevelDB's block and key
 * encoding), and snappy/none tables keep LevelDB's footer, which LevelDB requires
 * (`footerFormatFor`). Readers accept both; LZ4 blocks are read with the varint framing under
 * either footer, since sievekv wrote LZ4 tables with LevelDB's footer before.
 *
 * `size` excludes the 5-byte block trailer that follows every block. Decoding checks the magic
 * first (a file that is not a table says so), then the layout it implies, then the handles; any
 * failure is CORRUPTION naming the file and offset — also another RocksDB format_version or
 * checksum type, since those bytes carry no checksum and a flipped bit looks the same. Only
 * RocksDB's other table kinds (plain, cuckoo: an 8-byte magic no damage makes by chance) are
 * NOT_SUPPORTED. Whether a handle lies inside the file is for the table reader to check (it
 * knows the file size).
 */
import { corruption, notSupported } from '../errors.js';
import { getFixed32, putFixed32 } from '../format/coding.js';
import { ByteReader, putVarint64 } from '../format/varint.js';
import { CompressionType } from './compression.js';

/** Two varint64s: the most bytes a handle encodes to. */
export const MAX_BLOCK_HANDLE_LENGTH = 20;
/** Persisted: the size of LevelDB's footer. Never change. */
export const LEVELDB_FOOTER_SIZE = 48;
/** Persisted: the size of RocksDB's block-based footer (format_version 1 to 5). Never change. */
export const ROCKSDB_FOOTER_SIZE = 53;
/** The shortest footer: a file shorter than this is not a table. */
export const MIN_FOOTER_SIZE = LEVELDB_FOOTER_SIZE;
/** The longest footer: a reader that takes this many bytes from a table's end holds either. */
export const MAX_FOOTER_SIZE = ROCKSDB_FOOTER_SIZE;

/** Persisted: LevelDB's table magic 0xdb4775248b80fb57, low and high fixed32 halves. */
const LEVELDB_MAGIC = [0x8b80fb57, 0xdb477524] as const;
/** Persisted: RocksDB's block-based table magic 0x88e241b785f4cff7, low and high halves. */
const ROCKSDB_MAGIC = [0x85f4cff7, 0x88e241b7] as const;
/**
 * RocksDB's other table magics (plain table, its legacy form, cuckoo table), only so that such
 * a file is NOT_SUPPORTED rather than "not an sstable". Low and high halves.
 */
const OTHER_ROCKSDB_MAGICS: readonly (readonly [number, number, string])[] = [
  [0x63bf9564, 0x82422296, 'RocksDB plain table'],
  [0x7a8f13b8, 0x4f3418eb, 'RocksDB legacy plain table'],
  [0xc5f17873, 0x926789d0, 'RocksDB cuckoo table'],
];

/** Persisted: the format_version sievekv writes in RocksDB's footer (varint32-framed LZ4). */
export const ROCKSDB_FORMAT_VERSION = 2;
/** Persisted: RocksDB's ChecksumType kCRC32c, the checksum of every block trailer. */
export const CHECKSUM_TYPE_CRC32C = 1;
/** RocksDB's other ChecksumTypes, for messages. */
const OTHER_CHECKSUM_TYPES: Record<number, string> = { 0: 'none', 2: 'xxHash', 3: 'xxHash64', 4: 'XXH3' };

/**
 * Persisted (chosen by a table's magic): `leveldb` is LevelDB's 48-byte footer, `rocksdb` is
 * RocksDB's 53-byte block-based footer with format_version 2 and crc32c checksums.
 */
export type FooterFormat = 'leveldb' | 'rocksdb';

/**
 * The footer a table of `compression` is written with: RocksDB's for LZ4 (so RocksDB frames its
 * blocks as sievekv does), LevelDB's for snappy and none (so LevelDB reads the table).
 */
export function footerFormatFor(compression: CompressionType): FooterFormat {
  return compression === CompressionType.LZ4 ? 'rocksdb' : 'leveldb';
}

/**
 * The footer format whose magic ends at `buf[end - 8, end)`, or `undefined` for any other
 * bytes (also when fewer than 8 are there). For telling a table from other files.
 */
export function footerFormatOfMagic(buf: Uint8Array, end = buf.length): FooterFormat | undefined {
  if (end < 8) return undefined;
  const lo = getFixed32(buf, end - 8);
  const hi = getFixed32(buf, end - 4);
  if (lo === LEVELDB_MAGIC[0] && hi === LEVELDB_MAGIC[1]) return 'leveldb';
  if (lo === ROCKSDB_MAGIC[0] && hi === ROCKSDB_MAGIC[1]) return 'rocksdb';
  return undefined;
}

/** Reused by `decodeFrom` (synchronous, never re-entered), so decoding allocates nothing. */
const EMPTY = new Uint8Array(0);
const scratchReader = new ByteReader(EMPTY);

/**
 * Where a block lives in a table file: `offset` of its first byte and `size` of its contents
 * (not counting the trailer). Mutable so one handle can be decoded into repeatedly
 * (`decodeFrom`) on the lookup path.
 */
export class BlockHandle {
  offset: number;
  size: number;

  constructor(offset = 0, size = 0) {
    this.offset = offset;
    this.size = size;
  }

  /** Writes the handle at `dst[off]`; returns the offset past it (at most 20 bytes later). */
  encodeTo(dst: Uint8Array, off: number): number {
    return putVarint64(dst, putVarint64(dst, off, this.offset), this.size);
  }

  /** A new owned array holding the encoded handle (index entry values, metaindex values). */
  encode(): Uint8Array {
    const tmp = new Uint8Array(MAX_BLOCK_HANDLE_LENGTH);
    return tmp.slice(0, this.encodeTo(tmp, 0));
  }

  /**
   * Fills this handle from `buf[pos, limit)` and returns the offset past it. CORRUPTION (naming
   * `file` and `fileOffset + pos`) on a truncated or malformed varint.
   */
  decodeFrom(buf: Uint8Array, pos: number, limit: number, file?: string, fileOffset = 0): number {
    const end = this.read(scratchReader.reset(buf, pos, limit, file, fileOffset));
    scratchReader.buf = EMPTY; // do not keep the caller's block alive
    return end;
  }

  /** Fills this handle from `reader` (advancing it). */
  read(reader: ByteReader): number {
    this.offset = reader.varint64();
    this.size = reader.varint64();
    return reader.pos;
  }

  static decode(buf: Uint8Array, pos = 0, limit = buf.length, file?: string, fileOffset = 0): BlockHandle {
    const h = new BlockHandle();
    h.decodeFrom(buf, pos, limit, file, fileOffset);
    return h;
  }
}

/**
 * The last bytes of a table: where the metaindex and index blocks are, and which footer format
 * holds them (`leveldb`: 48 bytes; `rocksdb`: 53 bytes, format_version 2, crc32c).
 */
export class Footer {
  readonly metaindexHandle: BlockHandle;
  readonly indexHandle: BlockHandle;
  readonly format: FooterFormat;

  constructor(metaindexHandle: BlockHandle, indexHandle: BlockHandle, format: FooterFormat = 'leveldb') {
    this.metaindexHandle = metaindexHandle;
    this.indexHandle = indexHandle;
    this.format = format;
  }

  /** The footer's size in bytes: 48 or 53. */
  get encodedLength(): number {
    return this.format === 'rocksdb' ? ROCKSDB_FOOTER_SIZE : LEVELDB_FOOTER_SIZE;
  }

  /** RocksDB's format_version of the table: 0 (as RocksDB reads LevelDB's footer) or 2. */
  get formatVersion(): number {
    return this.format === 'rocksdb' ? ROCKSDB_FORMAT_VERSION : 0;
  }

  /** Writes the footer at `dst[off]`; returns `off + encodedLength`. */
  encodeTo(dst: Uint8Array, off: number): number {
    let p = off;
    if (this.format === 'rocksdb') dst[p++] = CHECKSUM_TYPE_CRC32C;
    const handlesEnd = p + 2 * MAX_BLOCK_HANDLE_LENGTH;
    p = this.indexHandle.encodeTo(dst, this.metaindexHandle.encodeTo(dst, p));
    dst.fill(0, p, handlesEnd);
    p = handlesEnd;
    if (this.format === 'rocksdb') p = putFixed32(dst, p, ROCKSDB_FORMAT_VERSION);
    const magic = this.format === 'rocksdb' ? ROCKSDB_MAGIC : LEVELDB_MAGIC;
    return putFixed32(dst, putFixed32(dst, p, magic[0]), magic[1]);
  }

  /** A new array holding the encoded footer (48 or 53 bytes). */
  encode(): Uint8Array {
    const out = new Uint8Array(this.encodedLength);
    this.encodeTo(out, 0);
    return out;
  }

  /**
   * Decodes the footer that ends at `buf`'s end: `buf` holds a table's last bytes (at least 48;
   * 53, or the whole file if shorter, to read either footer) and `fileOffset` is the file offset
   * of `buf[0]`, for errors. CORRUPTION if the bytes are too few for the footer, the magic is
   * not a table's ("not an sstable"), a RocksDB footer has another format_version or checksum
   * type, or a handle does not decode; NOT_SUPPORTED for RocksDB's plain and cuckoo tables.
   * Padding is not checked (as LevelDB and RocksDB: a future format may use it).
   */
  static decode(buf: Uint8Array, file?: string, fileOffset = 0): Footer {
    const end = buf.length;
    if (end < MIN_FOOTER_SIZE) {
      throw corruption(`not an sstable (footer too short: ${end} bytes)`, { file, offset: fileOffset });
    }
    const magicAt = end - 8;
    const format = footerFormatOfMagic(buf, end);
    if (format === undefined) {
      const lo = getFixed32(buf, magicAt);
      const hi = getFixed32(buf, magicAt + 4);
      const other = OTHER_ROCKSDB_MAGICS.find(([l, h]) => l === lo && h === hi);
      if (other !== undefined) throw notSupported(`${other[2]}: sievekv reads block-based tables only`, { file, offset: fileOffset + magicAt });
      throw corruption('not an sstable (bad magic number)', { file, offset: fileOffset + magicAt });
    }
    let start: number;
    if (format === 'leveldb') {
      start = end - LEVELDB_FOOTER_SIZE;
    } else {
      start = end - ROCKSDB_FOOTER_SIZE;
      if (start < 0) {
        throw corruption(`RocksDB footer cut short: ${end} bytes, needs ${ROCKSDB_FOOTER_SIZE}`, { file, offset: fileOffset });
      }
      const versionAt = magicAt - 4;
      const version = getFixed32(buf, versionAt);
      // Neither field is checksummed (before RocksDB's format_version 6), so a value other than
      // sievekv's may be damage as well as another writer: CORRUPTION, as RocksDB reports an
      // unknown footer version, with a message that names both possibilities.
      if (version !== ROCKSDB_FORMAT_VERSION) {
        throw corruption(
          `table format_version ${version}: damaged, or a RocksDB table of a format_version sievekv does not read (it reads ${ROCKSDB_FORMAT_VERSION})`,
          { file, offset: fileOffset + versionAt },
        );
      }
      const checksum = buf[start]!;
      if (checksum !== CHECKSUM_TYPE_CRC32C) {
        const name = OTHER_CHECKSUM_TYPES[checksum];
        throw corruption(
          `table checksum type ${name === undefined ? checksum : `${checksum} (${name})`}: damaged, or a RocksDB table with checksums sievekv does not read (it reads crc32c)`,
          { file, offset: fileOffset + start },
        );
      }
      start += 1;
    }
    const reader = new ByteReader(buf, start, start + 2 * MAX_BLOCK_HANDLE_LENGTH, file, fileOffset);
    const metaindex = new BlockHandle();
    metaindex.read(reader);
    const index = new BlockHandle();
    index.read(reader);
    return new Footer(metaindex, index, format);
  }
}
