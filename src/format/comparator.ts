/**
 * The comparator seam, after LevelDB's `include/leveldb/comparator.h`, and the bytewise
 * comparator every sievekv database uses.
 *
 * A Comparator is a total order over byte strings plus two helpers the table builder uses to
 * shorten index keys. Its `name` is persisted (in the MANIFEST) and checked on open: a database
 * made with one order must never be read with another. Comparisons take (buffer, start, end)
 * ranges so hot paths compare keys in place (in a block, in an iterator's key buffer) without
 * allocating views.
 */
import { compareByteRanges } from './bytes.js';

/** A total order over byte strings, with the key-shortening helpers of LevelDB's Comparator. */
export interface Comparator {
  /** Persisted in the MANIFEST: never change it for an order. */
  readonly name: string;
  /**
   * Negative, zero or positive as `a[aStart, aEnd)` sorts before, equal to or after
   * `b[bStart, bEnd)`. Never throws and never allocates.
   */
  compare(a: Uint8Array, aStart: number, aEnd: number, b: Uint8Array, bStart: number, bEnd: number): number;
  /**
   * A short key `s` with `start <= s < limit`, given `start < limit` (the table builder's index
   * separator between two data blocks). Returns `start` itself when it cannot shorten it,
   * otherwise a new owned array; never longer than `start`. Neither input is modified.
   */
  findShortestSeparator(start: Uint8Array, limit: Uint8Array): Uint8Array;
  /**
   * A short key `s >= key` (the index key after the last data block). Returns `key` itself when
   * it cannot shorten it, otherwise a new owned array. `key` is not modified.
   */
  findShortSuccessor(key: Uint8Array): Uint8Array;
}

/** Persisted: LevelDB's name for the bytewise order, stored in every MANIFEST. Never change. */
export const BYTEWISE_COMPARATOR_NAME = 'leveldb.BytewiseComparator' as const;

/**
 * Unsigned bytewise comparison of `a[aStart, aEnd)` and `b[bStart, bEnd)` (memcmp, then the
 * shorter first): negative, zero or positive. Allocation-free. Lives in bytes.ts; named here for
 * the comparator seam's users.
 */
export const compareBytes = compareByteRanges;

/** Bytewise comparison of two whole arrays. */
export function compareWhole(a: Uint8Array, b: Uint8Array): number {
  return compareBytes(a, 0, a.length, b, 0, b.length);
}

/** LevelDB's BytewiseComparator: unsigned lexicographic order. */
class BytewiseComparator implements Comparator {
  readonly name = BYTEWISE_COMPARATOR_NAME;

  compare(a: Uint8Array, aStart: number, aEnd: number, b: Uint8Array, bStart: number, bEnd: number): number {
    return compareBytes(a, aStart, aEnd, b, bStart, bEnd);
  }

  /**
   * At the first differing byte `d` (if neither key is a prefix of the other): when
   * `start[d] + 1 < limit[d]`, the separator is `start[0, d]` with that byte incremented.
   */
  findShortestSeparator(start: Uint8Array, limit: Uint8Array): Uint8Array {
    const minLength = start.length < limit.length ? start.length : limit.length;
    let d = 0;
    while (d < minLength && start[d] === limit[d]) d++;
    if (d >= minLength) return start; // one is a prefix of the other: do not shorten
    const byte = start[d]!;
    if (byte < 0xff && byte + 1 < limit[d]!) {
      const out = start.slice(0, d + 1);
      out[d] = byte + 1;
      return out;
    }
    return start;
  }

  /** The first byte that is not 0xff, incremented, ends the successor; all-0xff keys stay. */
  findShortSuccessor(key: Uint8Array): Uint8Array {
    for (let i = 0; i < key.length; i++) {
      const byte = key[i]!;
      if (byte !== 0xff) {
        const out = key.slice(0, i + 1);
        out[i] = byte + 1;
        return out;
      }
    }
    return key;
  }
}

/** The one bytewise comparator instance (identity is used to pick fast paths). */
export const bytewiseComparator: Comparator = new BytewiseComparator();
