/**
 * Internal keys, as LevelDB's db/dbformat: `user key ‖ fixed64(sequence << 8 | type)`.
 *
 * Every key inside tables, the memtable and the MANIFEST is an internal key. They sort by user key
 * ascending, then by the 8-byte trailer descending (sequence descending, then type descending),
 * so the newest version of a user key comes first and a seek for (key, snapshot sequence) lands
 * on the newest version visible at that snapshot.
 *
 * Sequence numbers in JS: sievekv's sequence numbers are plain numbers in [0, 2^53 − 1]
 * (`MAX_SEQUENCE`), enforced when a trailer is written and when one is read back as a number.
 * LevelDB allows up to 2^56 − 1 and writes exactly that value (kMaxSequenceNumber) into index
 * separators made by `findShortestSeparator` / `findShortSuccessor`; such keys are compared and
 * written exactly, because comparisons and the sentinel work on the trailer's two unsigned 32-bit
 * halves and never convert it to a number. Reading a sequence above 2^53 − 1 as a number is
 * CORRUPTION (`readSequence`); `readSequenceBigInt` shows any value (dump tools).
 */
import { corruption, invalidArgument } from '../errors.js';
import { getFixed32, putFixed32 } from './coding.js';
import { compareByteRanges as compareBytes } from './bytes.js';

/** Persisted: the type byte of an internal key's trailer. Never renumber. */
export const ValueType = {
  /** A deletion marker (tombstone): the key reads as absent at and after this sequence. */
  DELETION: 0,
  /** A value. */
  VALUE: 1,
} as const;
export type ValueType = (typeof ValueType)[keyof typeof ValueType];

/**
 * The type to pack into a seek key: the highest type, so that among entries with the seek's
 * sequence a seek lands on the first (LevelDB's kValueTypeForSeek).
 */
export const VALUE_TYPE_FOR_SEEK = ValueType.VALUE;

/** Bytes of the `sequence << 8 | type` trailer after the user key. */
export const INTERNAL_KEY_TRAILER_SIZE = 8;

/** The largest sequence number sievekv writes: 2^53 − 1, the largest exact JS integer. */
export const MAX_SEQUENCE = Number.MAX_SAFE_INTEGER;

/**
 * Persisted: the trailer halves of LevelDB's (kMaxSequenceNumber = 2^56 − 1, kValueTypeForSeek),
 * i.e. fixed64 0xffffffff_ffffff01, appended to shortened index separators. Never change.
 */
export const MAX_SEQUENCE_SEEK_TRAILER_LO = 0xffffff01 as const;
export const MAX_SEQUENCE_SEEK_TRAILER_HI = 0xffffffff as const;

const TWO_POW_24 = 16777216;

/**
 * Writes the trailer `fixed64(seq << 8 | type)` at `dst[off, off + 8)`; returns `off + 8`.
 * `seq` must be an integer in [0, MAX_SEQUENCE] and `type` a ValueType (INVALID_ARGUMENT
 * otherwise). The split into 32-bit halves keeps every bit: lo = (seq mod 2^24) << 8 | type,
 * hi = floor(seq / 2^24).
 */
export function writeTrailer(dst: Uint8Array, off: number, seq: number, type: ValueType): number {
  if (!Number.isSafeInteger(seq) || seq < 0) {
    throw invalidArgument(`sequence number must be an integer in [0, 2^53 - 1], got ${seq}`);
  }
  if (type !== ValueType.DELETION && type !== ValueType.VALUE) {
    throw invalidArgument(`value type must be 0 (deletion) or 1 (value), got ${String(type)}`);
  }
  const hi = Math.floor(seq / TWO_POW_24);
  const lo = (((seq - hi * TWO_POW_24) << 8) | type) >>> 0;
  putFixed32(dst, off, lo);
  return putFixed32(dst, off + 4, hi);
}

/**
 * Writes `userKey ‖ trailer(seq, type)` at `dst[off]`; returns the offset past it. Requires
 * `off + userKey.length + 8 <= dst.length`.
 */
export function writeInternalKey(
  dst: Uint8Array,
  off: number,
  userKey: Uint8Array,
  seq: number,
  type: ValueType,
): number {
  dst.set(userKey, off);
  return writeTrailer(dst, off + userKey.length, seq, type);
}

/** A new owned internal key `userKey ‖ trailer(seq, type)`. */
export function encodeInternalKey(userKey: Uint8Array, seq: number, type: ValueType): Uint8Array {
  const out = new Uint8Array(userKey.length + INTERNAL_KEY_TRAILER_SIZE);
  writeInternalKey(out, 0, userKey, seq, type);
  return out;
}

/**
 * Checks that `buf[start, end)` is a well-formed internal key (at least 8 bytes, type 0 or 1);
 * otherwise CORRUPTION naming `file` and `offset`. Readers call this before trusting a key's
 * parts; the comparators below never throw and order malformed keys deterministically instead.
 */
export function checkInternalKey(buf: Uint8Array, start: number, end: number, file?: string, offset?: number): void {
  if (end - start < INTERNAL_KEY_TRAILER_SIZE) {
    throw corruption(`internal key too short (${end - start} bytes)`, { file, offset });
  }
  const type = buf[end - INTERNAL_KEY_TRAILER_SIZE]!;
  if (type > ValueType.VALUE) {
    throw corruption(`bad value type ${type} in internal key`, { file, offset });
  }
}

/** The type byte of the internal key ending at `end` (requires a length >= 8). */
export function readValueType(buf: Uint8Array, end: number): number {
  return buf[end - INTERNAL_KEY_TRAILER_SIZE]!;
}

/**
 * The sequence number of the internal key ending at `end` (requires a length >= 8), exact.
 * A sequence above MAX_SEQUENCE (e.g. LevelDB's seek sentinel) is CORRUPTION here: entries
 * that carry values never have one.
 */
export function readSequence(buf: Uint8Array, end: number, file?: string, offset?: number): number {
  const lo = getFixed32(buf, end - 8);
  const hi = getFixed32(buf, end - 4);
  if (hi >= 0x20000000) throw corruption('sequence number exceeds 2^53 - 1', { file, offset });
  return hi * TWO_POW_24 + (lo >>> 8);
}

/** The sequence number of the internal key ending at `end`, any size (not for hot paths). */
export function readSequenceBigInt(buf: Uint8Array, end: number): bigint {
  const lo = getFixed32(buf, end - 8);
  const hi = getFixed32(buf, end - 4);
  return (BigInt(hi) << 24n) | BigInt(lo >>> 8);
}

/**
 * The internal-key order over `a[aStart, aEnd)` and `b[bStart, bEnd)` with bytewise user keys:
 * user key ascending, then trailer (sequence, then type) descending. Allocation-free; never
 * throws. A malformed key shorter than 8 bytes is ordered as an empty user key with a zero
 * trailer (deterministic; readers reject such keys with `checkInternalKey`).
 */
export function compareInternalKeys(
  a: Uint8Array,
  aStart: number,
  aEnd: number,
  b: Uint8Array,
  bStart: number,
  bEnd: number,
): number {
  const aUser = aEnd - aStart >= 8 ? aEnd - 8 : aStart;
  const bUser = bEnd - bStart >= 8 ? bEnd - 8 : bStart;
  const r = compareBytes(a, aStart, aUser, b, bStart, bUser);
  if (r !== 0) return r;
  return compareTrailers(a, aUser, aEnd, b, bUser, bEnd);
}

/**
 * Descending order of the trailers at `a[aUser, aEnd)` and `b[bUser, bEnd)` (each 8 bytes, or
 * empty for a malformed key, read as 0): negative when `a`'s trailer is larger.
 */
export function compareTrailers(
  a: Uint8Array,
  aUser: number,
  aEnd: number,
  b: Uint8Array,
  bUser: number,
  bEnd: number,
): number {
  const aHi = aEnd - aUser === 8 ? getFixed32(a, aUser + 4) : 0;
  const bHi = bEnd - bUser === 8 ? getFixed32(b, bUser + 4) : 0;
  if (aHi !== bHi) return aHi > bHi ? -1 : 1;
  const aLo = aEnd - aUser === 8 ? getFixed32(a, aUser) : 0;
  const bLo = bEnd - bUser === 8 ? getFixed32(b, bUser) : 0;
  if (aLo !== bLo) return aLo > bLo ? -1 : 1;
  return 0;
}
