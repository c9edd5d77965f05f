/**
 * Restart windows: a search aid for a block of internal keys in bytewise order that is searched
 * again and again, as a table's index block is (one restart point per entry, ~500 entries in a
 * 2 MiB table, searched by every read of the table). Built in memory only; nothing reaches disk.
 *
 * The user keys between two restart keys share the bytes those two share (the keys are sorted);
 * past that prefix (of the second and the second-to-last restart keys), eight bytes of each user
 * key (0 where it has ended) are kept as two uint32s, big-endian: the window (the first four) and
 * the low window (the next four). A key without the prefix gets window 0 or 2^32 - 1, as it sorts
 * before or after them. For two user keys with the prefix, windows that differ order them as the
 * keys do: at the first differing byte either both are real bytes, or one key has ended there
 * (its 0 stands below any real byte but 0, and an ended key sorts first); so do low windows that
 * differ under equal windows, the eight bytes being one big-endian number. Equal windows and low
 * windows decide nothing: the key itself is compared then. So a binary search over restart points
 * compares numbers from two small arrays, and decodes a key only where eight bytes past the
 * prefix do not tell it from the target (db_bench's 16-byte keys share 10 or 11 bytes in a
 * table: four bytes left 0.8 ties per index seek, each a key decoded and compared).
 *
 * BlockIterator.seek builds a block's windows at its WINDOWS_AFTER_SEEKS-th seek, when the
 * block has at least WINDOWS_MIN_RESTARTS restart points and keys of the bytewise
 * internal-key order; a target without the prefix falls back to the plain search.
 */
import { compareInternalKeys, INTERNAL_KEY_TRAILER_SIZE } from '../format/internal-key.js';
import type { Comparator } from '../format/comparator.js';
import type { Block } from './block.js';

/** Fewer restart points than this: the plain search is as fast. */
export const WINDOWS_MIN_RESTARTS = 16;

/** Seeks of one block before its windows are built: most data blocks are searched once or twice. */
export const WINDOWS_AFTER_SEEKS = 4;

export class RestartWindows {
  constructor(
    /** Where the prefix's bytes lie in the block: the second restart key's offset. */
    readonly prefixStart: number,
    /** Bytes every restart key's user key starts with. */
    readonly prefixLength: number,
    /** Per restart point, its user key's window (see the header). */
    readonly windows: Uint32Array,
    /** Per restart point, its user key's low window: the four bytes after the window's. */
    readonly lowWindows: Uint32Array,
  ) {}
}

/** True if `comparator` orders internal keys with bytewise user keys (the windows' order). */
export function usesBytewiseInternalKeys(comparator: Comparator): boolean {
  return comparator.compare === compareInternalKeys;
}

/**
 * The window of the user key `bytes[start, userEnd)` past `prefixLength` bytes: four bytes,
 * big-endian, 0 for bytes past the key's end.
 */
export function windowOf(bytes: Uint8Array, start: number, userEnd: number, prefixLength: number): number {
  const p = start + prefixLength;
  const b0 = p < userEnd ? bytes[p]! : 0;
  const b1 = p + 1 < userEnd ? bytes[p + 1]! : 0;
  const b2 = p + 2 < userEnd ? bytes[p + 2]! : 0;
  const b3 = p + 3 < userEnd ? bytes[p + 3]! : 0;
  return ((b0 << 24) | (b1 << 16) | (b2 << 8) | b3) >>> 0;
}

/**
 * The windows of `block`'s restart keys, or null if a restart entry does not decode as a whole
 * internal key (the plain search then reads it and reports the damage).
 */
export function buildRestartWindows(block: Block): RestartWindows | null {
  const n = block.numRestarts;
  const starts = new Int32Array(n);
  const userEnds = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    if (!decodeRestartKey(block, i, starts, userEnds)) return null;
  }
  // The prefix is that of the second and the second-to-last keys: a table's index block ends
  // with a short successor ("1" after "0999…") that shares nothing with the rest.
  const data = block.data;
  const first = starts[1]!;
  const last = starts[n - 2]!;
  const firstLength = userEnds[1]! - first;
  const lastLength = userEnds[n - 2]! - last;
  const limit = firstLength < lastLength ? firstLength : lastLength;
  let prefixLength = 0;
  while (prefixLength < limit && data[first + prefixLength] === data[last + prefixLength]) prefixLength++;
  const windows = new Uint32Array(n);
  const lowWindows = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const start = starts[i]!;
    const userEnd = userEnds[i]!;
    const order = comparePrefix(data, start, userEnd, first, prefixLength);
    // A key without the prefix sorts before or after every key with it: the lowest or the
    // highest windows say so (ties are compared in full).
    if (order === 0) {
      windows[i] = windowOf(data, start, userEnd, prefixLength);
      lowWindows[i] = windowOf(data, start, userEnd, prefixLength + 4);
    } else {
      windows[i] = lowWindows[i] = order < 0 ? 0 : 0xffffffff;
    }
  }
  return new RestartWindows(first, prefixLength, windows, lowWindows);
}

/**
 * How the user key `data[start, userEnd)` stands to the prefix `data[prefix, prefix + length)`:
 * 0 if it starts with it, < 0 if it sorts before every key that does, > 0 if after.
 */
function comparePrefix(data: Uint8Array, start: number, userEnd: number, prefix: number, length: number): number {
  for (let i = 0; i < length; i++) {
    if (start + i >= userEnd) return -1;
    const d = data[start + i]! - data[prefix + i]!;
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Decodes the header of restart entry `i` into `starts[i]` (its key's offset) and `userEnds[i]`
 * (where its user key ends); false if the entry shares a prefix, has a key shorter than a
 * trailer, or runs past the entries.
 */
function decodeRestartKey(block: Block, i: number, starts: Int32Array, userEnds: Int32Array): boolean {
  const data = block.data;
  const limit = block.restartOffset;
  let q = block.restartPoint(i);
  let shared = 0;
  let nonShared = 0;
  for (let field = 0; field < 3; field++) {
    let value = 0;
    let shift = 0;
    for (;;) {
      if (q >= limit || shift > 28) return false;
      const byte = data[q++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) break;
      shift += 7;
    }
    if (field === 0) shared = value;
    else if (field === 1) nonShared = value;
  }
  if (shared !== 0 || nonShared < INTERNAL_KEY_TRAILER_SIZE || nonShared > limit - q) return false;
  starts[i] = q;
  userEnds[i] = q + nonShared - INTERNAL_KEY_TRAILER_SIZE;
  return true;
}
