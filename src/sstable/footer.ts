/**
 * Block handles and the table footer, as LevelDB's table/format (doc/table_format.md):
 *
 *   BlockHandle = varint64 offset ‖ varint64 size          (at most 20 bytes)
 *   Footer      = metaindex handle ‖ index handle ‖ zero padding to 40 bytes
 *                 ‖ fixed32 0x8b80fb57 ‖ fixed32 0xdb477524   (magic 0xdb4775248b80fb57; 48 bytes)
 *
 * `size` excludes the 5-byte block trailer that follows every block. Decoding checks the magic
 * first (a file that is not a table says so), then the handles; any failure is CORRUPTION naming
 * the file and offset. Whether a handle lies inside the file is for the table reader to check
 * (it knows the file size).
 */
import { corruption } from '../errors.js';
import { getFixed32, putFixed32 } from '../format/coding.js';
import { ByteReader, putVarint64 } from '../format/varint.js';

/** Two varint64s: the most bytes a handle encodes to. */
export const MAX_BLOCK_HANDLE_LENGTH = 20;
/** Persisted: the footer's size. Never change. */
export const FOOTER_SIZE = 48;
/** Persisted: the low and high halves of LevelDB's table magic 0xdb4775248b80fb57. */
export const TABLE_MAGIC_LO = 0x8b80fb57 as const;
export const TABLE_MAGIC_HI = 0xdb477524 as const;

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

/** The last 48 bytes of a table: where the metaindex and index blocks are. */
export class Footer {
  readonly metaindexHandle: BlockHandle;
  readonly indexHandle: BlockHandle;

  constructor(metaindexHandle: BlockHandle, indexHandle: BlockHandle) {
    this.metaindexHandle = metaindexHandle;
    this.indexHandle = indexHandle;
  }

  /** Writes the 48-byte footer at `dst[off]`; returns `off + 48`. */
  encodeTo(dst: Uint8Array, off: number): number {
    let p = this.metaindexHandle.encodeTo(dst, off);
    p = this.indexHandle.encodeTo(dst, p);
    dst.fill(0, p, off + 2 * MAX_BLOCK_HANDLE_LENGTH);
    putFixed32(dst, off + 2 * MAX_BLOCK_HANDLE_LENGTH, TABLE_MAGIC_LO);
    return putFixed32(dst, off + 2 * MAX_BLOCK_HANDLE_LENGTH + 4, TABLE_MAGIC_HI);
  }

  /** A new 48-byte footer. */
  encode(): Uint8Array {
    const out = new Uint8Array(FOOTER_SIZE);
    this.encodeTo(out, 0);
    return out;
  }

  /**
   * Decodes the footer at `buf[off, off + 48)`; `fileOffset` is the file offset of `buf[off]`
   * (file size − 48 when reading a table's tail). CORRUPTION if fewer than 48 bytes remain, the
   * magic is wrong ("not an sstable") or a handle does not decode. Padding is not checked (as
   * LevelDB: a future format may use it).
   */
  static decode(buf: Uint8Array, off = 0, file?: string, fileOffset = off): Footer {
    if (buf.length - off < FOOTER_SIZE) {
      throw corruption(`not an sstable (footer too short: ${Math.max(0, buf.length - off)} bytes)`, {
        file,
        offset: fileOffset,
      });
    }
    const magicAt = off + 2 * MAX_BLOCK_HANDLE_LENGTH;
    if (getFixed32(buf, magicAt) !== TABLE_MAGIC_LO || getFixed32(buf, magicAt + 4) !== TABLE_MAGIC_HI) {
      throw corruption('not an sstable (bad magic number)', { file, offset: fileOffset + 2 * MAX_BLOCK_HANDLE_LENGTH });
    }
    const reader = new ByteReader(buf, off, magicAt, file, fileOffset - off);
    const metaindex = new BlockHandle();
    metaindex.read(reader);
    const index = new BlockHandle();
    index.read(reader);
    return new Footer(metaindex, index);
  }
}
