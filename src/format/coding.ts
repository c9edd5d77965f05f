/**
 * Little-endian fixed-width integers on `Uint8Array`s, as LevelDB's EncodeFixed32/64.
 *
 * Byte arithmetic only: no DataView per call, nothing allocated. The hot-path getters do not check
 * bounds: callers check `off + 4 <= buf.length` (or 8) first, as the block, footer and log
 * decoders do against their own limits. Bounds-checked reads live in `ByteReader` (varint.ts).
 *
 * 64-bit values come in two forms: a JS number, exact in [0, 2^53 − 1] (what offsets, sizes and
 * sievekv's sequence numbers need), and a (lo, hi) pair of unsigned 32-bit halves for values that
 * may use all 64 bits (LevelDB's internal-key trailers; see internal-key.ts).
 */
import { corruption, invalidArgument } from '../errors.js';

const TWO_POW_32 = 4294967296;

/** Writes the low 32 bits of `v` at `dst[off, off + 4)`; returns `off + 4`. */
export function putFixed32(dst: Uint8Array, off: number, v: number): number {
  dst[off] = v;
  dst[off + 1] = v >>> 8;
  dst[off + 2] = v >>> 16;
  dst[off + 3] = v >>> 24;
  return off + 4;
}

/** The unsigned 32-bit integer at `buf[off, off + 4)`. Requires `off + 4 <= buf.length`. */
export function getFixed32(buf: Uint8Array, off: number): number {
  return (buf[off]! | (buf[off + 1]! << 8) | (buf[off + 2]! << 16) | (buf[off + 3]! << 24)) >>> 0;
}

/**
 * Writes the integer `v` in [0, 2^53 − 1] at `dst[off, off + 8)`; returns `off + 8`.
 * Anything else is INVALID_ARGUMENT (it would be written wrongly, silently).
 */
export function putFixed64(dst: Uint8Array, off: number, v: number): number {
  if (!Number.isSafeInteger(v) || v < 0) {
    throw invalidArgument(`fixed64 value must be an integer in [0, 2^53 - 1], got ${v}`);
  }
  const hi = Math.floor(v / TWO_POW_32);
  putFixed32(dst, off, v - hi * TWO_POW_32);
  return putFixed32(dst, off + 4, hi);
}

/** Writes the 64-bit value `hi · 2^32 + lo` (two unsigned 32-bit halves); returns `off + 8`. */
export function putFixed64Parts(dst: Uint8Array, off: number, lo: number, hi: number): number {
  putFixed32(dst, off, lo);
  return putFixed32(dst, off + 4, hi);
}

/**
 * The 64-bit integer at `buf[off, off + 8)` as a number. A value above 2^53 − 1 is CORRUPTION
 * (no field read this way may hold one). Requires `off + 8 <= buf.length`.
 */
export function getFixed64(buf: Uint8Array, off: number): number {
  const hi = getFixed32(buf, off + 4);
  if (hi > 0x1fffff) throw corruption('fixed64 value exceeds 2^53 - 1', { offset: off });
  return hi * TWO_POW_32 + getFixed32(buf, off);
}

/** The low unsigned 32 bits of the fixed64 at `buf[off, off + 8)`. */
export function getFixed64Lo(buf: Uint8Array, off: number): number {
  return getFixed32(buf, off);
}

/** The high unsigned 32 bits of the fixed64 at `buf[off, off + 8)`. */
export function getFixed64Hi(buf: Uint8Array, off: number): number {
  return getFixed32(buf, off + 4);
}
