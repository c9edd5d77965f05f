/**
 * LEB128 varints as LevelDB writes them (util/coding.cc): 7 bits per byte, least significant
 * group first, high bit set on every byte but the last.
 *
 * Writers put bytes into a caller-owned buffer at an offset and return the offset just past what
 * they wrote; the caller guarantees room (`MAX_VARINT32_LENGTH` / `MAX_VARINT64_LENGTH`, or the
 * exact `varint32Length` / `varint64Length`).
 *
 * Readers go through `ByteReader`, a cursor over `buf[pos, limit)` that never reads at or past
 * `limit` and throws a CORRUPTION `SieveError` (naming the file and file offset it was given) for
 * a varint that runs past the limit, is longer than its maximum, or overflows its width. A reader
 * is reusable (`reset`), so hot paths decode without allocating.
 *
 * 64-bit values are JS numbers: exact up to 2^53 − 1 (`Number.MAX_SAFE_INTEGER`). Every varint64
 * in the formats (file offsets and sizes, file numbers, log numbers, sequence numbers in the
 * MANIFEST) stays far below that, so a larger value is reported as CORRUPTION rather than rounded.
 * (Internal-key trailers, where LevelDB packs sequence << 8 | type into 64 bits and may store
 * 2^56 − 1, are fixed64 and handled as two 32-bit halves in internal-key.ts.)
 */
import { corruption, invalidArgument } from '../errors.js';

/** A varint32 takes at most 5 bytes. */
export const MAX_VARINT32_LENGTH = 5;
/** A varint64 takes at most 10 bytes. */
export const MAX_VARINT64_LENGTH = 10;

const TWO_POW_32 = 4294967296;

/** Bytes `putVarint32(v)` writes; `v` is taken as an unsigned 32-bit integer. */
export function varint32Length(v: number): number {
  v = v >>> 0;
  if (v < 0x80) return 1;
  if (v < 0x4000) return 2;
  if (v < 0x200000) return 3;
  if (v < 0x10000000) return 4;
  return 5;
}

/** Bytes `putVarint64(v)` writes; `v` is an integer in [0, 2^53 − 1]. */
export function varint64Length(v: number): number {
  let n = 1;
  while (v >= 128) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

/**
 * Writes `v` (taken as an unsigned 32-bit integer, `v >>> 0`) at `dst[off]`; returns the offset
 * past the last byte written. Requires `off + varint32Length(v) <= dst.length`.
 */
export function putVarint32(dst: Uint8Array, off: number, v: number): number {
  v = v >>> 0;
  while (v >= 0x80) {
    dst[off++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  dst[off++] = v;
  return off;
}

/**
 * Writes the integer `v` in [0, 2^53 − 1] at `dst[off]`; returns the offset past the last byte
 * written. Throws INVALID_ARGUMENT for anything else (a negative, fractional or unsafe value
 * would be written wrongly, silently).
 */
export function putVarint64(dst: Uint8Array, off: number, v: number): number {
  if (!Number.isSafeInteger(v) || v < 0) {
    throw invalidArgument(`varint64 value must be an integer in [0, 2^53 - 1], got ${v}`);
  }
  if (v < TWO_POW_32) return putVarint32(dst, off, v);
  while (v >= 0x80) {
    dst[off++] = (v % 128) | 0x80;
    v = Math.floor(v / 128);
  }
  dst[off++] = v;
  return off;
}

/**
 * A cursor over `buf[pos, limit)`. Every read checks `limit` first; a short or malformed read
 * throws CORRUPTION with `file` and `fileOffset + pos` (the file offset of the bad byte when
 * `fileOffset` is the file offset of `buf[0]`). Views returned by `bytes` are borrowed from
 * `buf`. One owner at a time (it is mutable); reuse it with `reset` instead of allocating.
 */
export class ByteReader {
  buf: Uint8Array;
  pos: number;
  limit: number;
  /** Named in errors; `undefined` when the bytes do not come from a file. */
  file: string | undefined;
  /** The file offset of `buf[0]`, so errors can name the file offset of the bad byte. */
  fileOffset: number;

  constructor(buf: Uint8Array, pos = 0, limit = buf.length, file?: string, fileOffset = 0) {
    this.buf = buf;
    this.pos = pos;
    this.limit = limit;
    this.file = file;
    this.fileOffset = fileOffset;
  }

  /** Re-targets this reader at `buf[pos, limit)`; keeps `file` and `fileOffset` unless given. */
  reset(buf: Uint8Array, pos = 0, limit = buf.length, file = this.file, fileOffset = this.fileOffset): this {
    this.buf = buf;
    this.pos = pos;
    this.limit = limit;
    this.file = file;
    this.fileOffset = fileOffset;
    return this;
  }

  /** Bytes left before `limit`. */
  get remaining(): number {
    return this.limit - this.pos;
  }

  /** Throws CORRUPTION at the current position with `message`. */
  fail(message: string, at = this.pos): never {
    throw corruption(message, { file: this.file, offset: this.fileOffset + at });
  }

  /** Reads one varint32 (at most 5 bytes, value < 2^32). */
  varint32(): number {
    const buf = this.buf;
    const limit = this.limit;
    let p = this.pos;
    if (p >= limit) this.fail('truncated varint32');
    let b = buf[p++]!;
    if (b < 0x80) {
      this.pos = p;
      return b;
    }
    let result = b & 0x7f;
    for (let shift = 7; shift <= 28; shift += 7) {
      if (p >= limit) this.fail('truncated varint32', this.pos);
      b = buf[p++]!;
      if (shift === 28 && b > 0x0f) this.fail('varint32 too long or overflows 32 bits', this.pos);
      result |= (b & 0x7f) << shift;
      if (b < 0x80) {
        this.pos = p;
        return result >>> 0;
      }
    }
    return this.fail('varint32 too long', this.pos);
  }

  /** Reads one varint64 (at most 10 bytes); a value above 2^53 − 1 is CORRUPTION. */
  varint64(): number {
    const buf = this.buf;
    const limit = this.limit;
    let p = this.pos;
    if (p >= limit) this.fail('truncated varint64');
    let b = buf[p++]!;
    if (b < 0x80) {
      this.pos = p;
      return b;
    }
    let result = b & 0x7f;
    let scale = 128;
    for (let i = 1; i < MAX_VARINT64_LENGTH; i++) {
      if (p >= limit) this.fail('truncated varint64', this.pos);
      b = buf[p++]!;
      result += (b & 0x7f) * scale;
      if (b < 0x80) {
        if (result > Number.MAX_SAFE_INTEGER) this.fail('varint64 exceeds 2^53 - 1', this.pos);
        this.pos = p;
        return result;
      }
      scale *= 128;
    }
    return this.fail('varint64 too long', this.pos);
  }

  /** Reads one byte. */
  byte(): number {
    if (this.pos >= this.limit) this.fail('truncated input (expected a byte)');
    return this.buf[this.pos++]!;
  }

  /** Reads a little-endian unsigned 32-bit integer. */
  fixed32(): number {
    const p = this.pos;
    if (this.limit - p < 4) this.fail('truncated fixed32');
    const b = this.buf;
    this.pos = p + 4;
    return (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
  }

  /** Reads a little-endian 64-bit integer; a value above 2^53 − 1 is CORRUPTION. */
  fixed64(): number {
    const start = this.pos;
    const lo = this.fixed32();
    const hi = this.fixed32();
    if (hi > 0x1fffff) this.fail('fixed64 exceeds 2^53 - 1', start);
    return hi * TWO_POW_32 + lo;
  }

  /** Advances past `n` bytes (CORRUPTION if fewer remain). */
  skip(n: number): void {
    if (n > this.limit - this.pos) this.fail(`truncated input (expected ${n} more bytes)`);
    this.pos += n;
  }

  /** The next `n` bytes as a view borrowed from `buf` (CORRUPTION if fewer remain). */
  bytes(n: number): Uint8Array {
    const p = this.pos;
    if (n > this.limit - p) this.fail(`truncated input (expected ${n} more bytes)`);
    this.pos = p + n;
    return this.buf.subarray(p, p + n);
  }

  /** A varint32 length then that many bytes, as a view borrowed from `buf`. */
  lengthPrefixed(): Uint8Array {
    const start = this.pos;
    const n = this.varint32();
    if (n > this.limit - this.pos) this.fail('length-prefixed slice runs past the end', start);
    return this.bytes(n);
  }
}
