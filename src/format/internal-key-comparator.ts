/**
 * The comparator over internal keys (`user key ‖ fixed64(seq << 8 | type)`), after LevelDB's
 * InternalKeyComparator: the user comparator's order on the user keys, then the trailer
 * descending. Data and index blocks of tables are ordered by it.
 *
 * Its name is not persisted (the MANIFEST stores the user comparator's name). With the bytewise
 * user comparator `compare` is `compareInternalKeys` itself (no virtual call on the hot path).
 */
import { bytewiseComparator, type Comparator } from './comparator.js';
import {
  compareInternalKeys,
  compareTrailers,
  INTERNAL_KEY_TRAILER_SIZE,
  MAX_SEQUENCE_SEEK_TRAILER_HI,
  MAX_SEQUENCE_SEEK_TRAILER_LO,
} from './internal-key.js';
import { putFixed64Parts } from './coding.js';

export class InternalKeyComparator implements Comparator {
  readonly name = 'leveldb.InternalKeyComparator';
  readonly user: Comparator;
  /** See Comparator.compare; malformed keys (< 8 bytes) order as in `compareInternalKeys`. */
  readonly compare: Comparator['compare'];

  constructor(user: Comparator) {
    this.user = user;
    this.compare =
      user === bytewiseComparator
        ? compareInternalKeys
        : (a, aStart, aEnd, b, bStart, bEnd) => {
            const aUser = aEnd - aStart >= 8 ? aEnd - 8 : aStart;
            const bUser = bEnd - bStart >= 8 ? bEnd - 8 : bStart;
            const r = user.compare(a, aStart, aUser, b, bStart, bUser);
            return r !== 0 ? r : compareTrailers(a, aUser, aEnd, b, bUser, bEnd);
          };
  }

  /**
   * Shortens the user part of `start` with the user comparator; if that made it physically
   * shorter but logically larger, the result is the short user key with the earliest possible
   * trailer (2^56 − 1, kValueTypeForSeek), which still sorts before `limit`. Otherwise `start`.
   */
  findShortestSeparator(start: Uint8Array, limit: Uint8Array): Uint8Array {
    if (start.length < INTERNAL_KEY_TRAILER_SIZE || limit.length < INTERNAL_KEY_TRAILER_SIZE) return start;
    const userStart = start.subarray(0, start.length - INTERNAL_KEY_TRAILER_SIZE);
    const userLimit = limit.subarray(0, limit.length - INTERNAL_KEY_TRAILER_SIZE);
    const shorter = this.user.findShortestSeparator(userStart, userLimit);
    return this.withSeekTrailer(userStart, shorter) ?? start;
  }

  /** As `findShortestSeparator`, for the key after the last block (`key <= result`). */
  findShortSuccessor(key: Uint8Array): Uint8Array {
    if (key.length < INTERNAL_KEY_TRAILER_SIZE) return key;
    const userKey = key.subarray(0, key.length - INTERNAL_KEY_TRAILER_SIZE);
    const shorter = this.user.findShortSuccessor(userKey);
    return this.withSeekTrailer(userKey, shorter) ?? key;
  }

  private withSeekTrailer(userKey: Uint8Array, shorter: Uint8Array): Uint8Array | undefined {
    if (
      shorter.length >= userKey.length ||
      this.user.compare(userKey, 0, userKey.length, shorter, 0, shorter.length) >= 0
    ) {
      return undefined;
    }
    const out = new Uint8Array(shorter.length + INTERNAL_KEY_TRAILER_SIZE);
    out.set(shorter);
    putFixed64Parts(out, shorter.length, MAX_SEQUENCE_SEEK_TRAILER_LO, MAX_SEQUENCE_SEEK_TRAILER_HI);
    return out;
  }
}

/** The internal-key comparator over bytewise user keys (what every sievekv table uses). */
export const bytewiseInternalComparator = new InternalKeyComparator(bytewiseComparator);
