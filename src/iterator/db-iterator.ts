/**
 * DBIterator: the user's view of the database at one sequence number, over a merged
 * InternalIterator of every memtable and table (after LevelDB's db/db_iter.cc). It shows each
 * user key once, with its newest version whose sequence is ≤ the snapshot; a key whose newest
 * visible version is a deletion is hidden; bounds limit the user keys (bytewise order).
 *
 * Synchronous core; `EntryIterator` (entry-iterator.ts) wraps it for `for await` / `for...of`.
 * Not positioned until a seek; `next`/`prev`/`key`/`value` require `valid()`.
 *
 * Directions (LevelDB's invariant):
 * - forward: the internal iterator is at the entry that supplies `key()`/`value()`;
 * - reverse: the internal iterator is just before every entry of the current user key (at an
 *   older key's entry, or exhausted), and the current key and value are copies held here.
 * A switch re-walks the current key's versions once (next after prev, or prev after next).
 *
 * Borrowing: `key()`/`value()` are views valid until the iterator moves or closes (into the
 * internal iterator's buffers going forward; in reverse, the key into this iterator's reused
 * buffer and the value into the copy it saved). `keyBuffer()`/`valueBuffer()` return owned
 * copies; in reverse `valueBuffer()` hands over the saved copy itself, once.
 *
 * Keys only: made with `keysOnly`, the iterator never reads a value (not even to save it in
 * reverse) and `value()` is empty: a key scan (`db.clear`, Level's `keys()`) costs no copies.
 *
 * Errors: CORRUPTION for a malformed internal key (bad length, type or sequence); any error from
 * the internal iterator propagates. After an error the iterator is invalid until the next seek.
 * After `close()` every method but `valid()`/`close()` throws CLOSED.
 */
import { Buffer } from 'node:buffer';
import { ErrorCode, SieveError, corruption, invalidArgument } from '../errors.js';
import { allocateBytes } from '../format/byte-arena.js';
import { getFixed32 } from '../format/coding.js';
import { compareByteRanges as compareBytes, copyBytes, copyToBuffer } from '../format/bytes.js';
import {
  INTERNAL_KEY_TRAILER_SIZE,
  VALUE_TYPE_FOR_SEEK,
  ValueType,
  writeTrailer,
} from '../format/internal-key.js';
import type { InternalIterator } from './internal-iterator.js';

const TWO_POW_24 = 16777216;
/** The value of a keys-only iterator, and the saved value when none is held: empty, so sharing it is safe. */
const NO_VALUE_BUFFER = Buffer.alloc(0);

/** User-key bounds; `null` means unbounded on that side. */
export interface UserKeyBounds {
  readonly lower: Uint8Array | null;
  readonly lowerInclusive: boolean;
  readonly upper: Uint8Array | null;
  readonly upperInclusive: boolean;
}

/** The user key's length in internal key `k`; CORRUPTION if `k` is too short to be one. */
function userLength(k: Uint8Array): number {
  const n = k.length - INTERNAL_KEY_TRAILER_SIZE;
  if (n < 0) throw corruption(`internal key too short (${k.length} bytes) in a scan`);
  return n;
}

const UNBOUNDED: UserKeyBounds = { lower: null, lowerInclusive: true, upper: null, upperInclusive: true };

/** An iterator's saved key until it first saves one: empty, so sharing it is safe. */
const NO_KEY: Uint8Array = new Uint8Array(0);

/**
 * Seek targets are built here (user key ‖ trailer), one buffer for all iterators of the thread:
 * a target is borrowed only for the internal iterator's `seek` call (InternalIterator's contract;
 * the merging iterator copies what it keeps for the children whose seek it puts off), so an
 * iterator made per seek makes no buffer for it. `targetView` is the last view of it handed out,
 * reused while its length is the same (the buffer is replaced only to grow, for a longer target,
 * so a view of the old one never has the length asked).
 * `targetSeeks` counts the seeks using it now: a seek that starts inside one (a user's FileSystem
 * or FilterPolicy seeking another iterator) builds its target in a buffer of its own, as does
 * one whose target is longer than TARGET_KEPT_BYTES (the shared buffer is never shrunk).
 */
let targetBytes: Uint8Array = allocateBytes(64);
let targetView: Uint8Array = targetBytes.subarray(0, 0);
let targetSeeks = 0;
const TARGET_KEPT_BYTES = 4096;

export class DBIterator {
  readonly #iter: InternalIterator;
  readonly #sequence: number;
  readonly #lower: Uint8Array | null;
  readonly #lowerInclusive: boolean;
  readonly #upper: Uint8Array | null;
  readonly #upperInclusive: boolean;
  readonly #keysOnly: boolean;
  #forward = true;
  #valid = false;
  #closed = false;
  /** An error came out of the internal iterator: its state is not to be trusted again. */
  #failedOnce = false;
  /** Takes the internal iterator at `close()` instead of closing it (see the constructor). */
  readonly #releaseIter: ((iter: InternalIterator, healthy: boolean) => void) | undefined;
  /** A user key: the key to skip past (forward) or the current key (reverse). Made at the first save. */
  #savedKey: Uint8Array = NO_KEY;
  #savedKeyLen = 0;
  /**
   * The current value in reverse: a fresh Buffer per saved version (from Node's pool), so that
   * `valueBuffer()` can hand it over instead of copying it a second time.
   */
  #savedValue: Buffer = NO_VALUE_BUFFER;
  /** `valueBuffer()` handed `#savedValue` over: a second call copies. */
  #savedValueTaken = false;
  /** Type of the entry last passed to #visible. */
  #type = 0;

  /**
   * @param iter the merged internal iterator (bytewise internal-key order), taken over: `close()`
   *   closes it.
   * @param sequence the snapshot: entries with a larger sequence are invisible. An integer in
   *   [0, MAX_SEQUENCE].
   * @param bounds user-key bounds (copied by the caller if it may mutate them); none by default.
   * @param keysOnly never read values: `value()` is empty.
   * @param releaseIter if given, `close()` hands it the internal iterator (and whether no error
   *   came out of it) instead of closing it: the database keeps a closed iterator's tree for the
   *   next one (db/iterators.ts).
   */
  constructor(
    iter: InternalIterator,
    sequence: number,
    bounds: UserKeyBounds = UNBOUNDED,
    keysOnly = false,
    releaseIter?: (iter: InternalIterator, healthy: boolean) => void,
  ) {
    if (!Number.isSafeInteger(sequence) || sequence < 0) {
      throw invalidArgument(`snapshot sequence must be an integer in [0, 2^53 - 1], got ${sequence}`);
    }
    this.#iter = iter;
    this.#releaseIter = releaseIter;
    this.#sequence = sequence;
    this.#lower = bounds.lower;
    this.#lowerInclusive = bounds.lowerInclusive;
    this.#upper = bounds.upper;
    this.#upperInclusive = bounds.upperInclusive;
    this.#keysOnly = keysOnly;
  }

  valid(): boolean {
    return this.#valid;
  }

  /** The current user key, borrowed until the iterator moves. Requires `valid()`. */
  key(): Uint8Array {
    this.#requireValid();
    if (this.#forward) {
      const k = this.#iter.key();
      return k.subarray(0, k.length - INTERNAL_KEY_TRAILER_SIZE);
    }
    return this.#savedKey.subarray(0, this.#savedKeyLen);
  }

  /** The current value (empty for a keys-only iterator), borrowed until the iterator moves. Requires `valid()`. */
  value(): Uint8Array {
    this.#requireValid();
    if (this.#keysOnly) return NO_VALUE_BUFFER;
    return this.#forward ? this.#iter.value() : this.#savedValue;
  }

  /** An owned copy of the current key. Requires `valid()`. */
  keyBuffer(): Buffer {
    this.#requireValid();
    if (this.#forward) {
      const k = this.#iter.key();
      return copyToBuffer(k, 0, k.length - INTERNAL_KEY_TRAILER_SIZE);
    }
    return copyToBuffer(this.#savedKey, 0, this.#savedKeyLen);
  }

  /**
   * An owned copy of the current value. Requires `valid()`. In reverse the first call hands over
   * the copy the iterator saved (`value()` then views the caller's buffer until the iterator moves).
   */
  valueBuffer(): Buffer {
    this.#requireValid();
    if (this.#keysOnly) return NO_VALUE_BUFFER;
    if (this.#forward) {
      const v = this.#iter.value();
      return copyToBuffer(v, 0, v.length);
    }
    if (this.#savedValueTaken) return copyToBuffer(this.#savedValue, 0, this.#savedValue.length);
    this.#savedValueTaken = true;
    return this.#savedValue;
  }

  /** The first visible key in bounds. */
  seekToFirst(): void {
    this.#guard();
    try {
      const lower = this.#lower;
      if (lower === null) {
        this.#startForward();
        this.#iter.seekToFirst();
        this.#afterForwardSeek(false);
      } else {
        this.#seekAtOrAfter(lower, this.#lowerInclusive);
      }
    } catch (err) {
      throw this.#failed(err);
    }
  }

  /** The last visible key in bounds. */
  seekToLast(): void {
    this.#guard();
    try {
      const upper = this.#upper;
      if (upper === null) {
        this.#forward = false;
        this.#iter.seekToLast();
        this.#findPrevUserEntry();
      } else {
        this.#seekAtOrBefore(upper, this.#upperInclusive);
      }
    } catch (err) {
      throw this.#failed(err);
    }
  }

  /** The first visible key ≥ `userKey` in bounds (the first in bounds if `userKey` is below them). */
  seek(userKey: Uint8Array): void {
    this.#guard();
    const lower = this.#lower;
    if (lower !== null && compareBytes(userKey, 0, userKey.length, lower, 0, lower.length) <= 0) {
      return this.seekToFirst();
    }
    try {
      this.#seekAtOrAfter(userKey, true);
    } catch (err) {
      throw this.#failed(err);
    }
  }

  /** The last visible key ≤ `userKey` in bounds (the last in bounds if `userKey` is above them). */
  seekForPrev(userKey: Uint8Array): void {
    this.#guard();
    const upper = this.#upper;
    if (upper !== null && compareBytes(userKey, 0, userKey.length, upper, 0, upper.length) >= 0) {
      return this.seekToLast();
    }
    try {
      this.#seekAtOrBefore(userKey, true);
    } catch (err) {
      throw this.#failed(err);
    }
  }

  /** The next visible key in bounds (invalid past the last). Requires `valid()`. */
  next(): void {
    this.#requireValid();
    try {
      const iter = this.#iter;
      if (!this.#forward) {
        // The internal iterator is just before the current key's entries: step into them; the
        // saved key (the current key) is the key to skip past.
        this.#forward = true;
        if (iter.valid()) iter.next();
        else iter.seekToFirst();
      } else {
        const k = iter.key();
        this.#saveKey(k, userLength(k));
        iter.next();
      }
      this.#clearSavedValue();
      this.#afterForwardSeek(true);
    } catch (err) {
      throw this.#failed(err);
    }
  }

  /** The previous visible key in bounds (invalid before the first). Requires `valid()`. */
  prev(): void {
    this.#requireValid();
    try {
      const iter = this.#iter;
      if (this.#forward) {
        // Walk back past every entry of the current key, to the reverse invariant.
        const k = iter.key();
        this.#saveKey(k, userLength(k));
        const saved = this.#savedKey;
        const savedLen = this.#savedKeyLen;
        for (;;) {
          iter.prev();
          if (!iter.valid()) break;
          const p = iter.key();
          if (compareBytes(p, 0, userLength(p), saved, 0, savedLen) < 0) break;
        }
        this.#forward = false;
      }
      this.#findPrevUserEntry();
    } catch (err) {
      throw this.#failed(err);
    }
  }

  /** Closes the internal iterator. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#valid = false;
    if (this.#releaseIter !== undefined) this.#releaseIter(this.#iter, !this.#failedOnce);
    else this.#iter.close();
  }

  #startForward(): void {
    this.#forward = true;
    this.#clearSavedValue();
  }

  /** Forward from the first visible entry of a user key ≥ `userKey` (> if exclusive). */
  #seekAtOrAfter(userKey: Uint8Array, inclusive: boolean): void {
    this.#startForward();
    // Inclusive: (key, snapshot) skips the versions too new to see. Exclusive: (key, 0, DELETION)
    // is the last possible internal key of `userKey`; the seek passes every version of the key
    // but that entry itself, which is a deletion and so hides itself.
    const target = inclusive
      ? this.#buildTarget(userKey, this.#sequence, VALUE_TYPE_FOR_SEEK)
      : this.#buildTarget(userKey, 0, ValueType.DELETION);
    this.#seekTo(target);
    this.#afterForwardSeek(false);
  }

  /** Reverse from the last entry of a user key ≤ `userKey` (< if exclusive). */
  #seekAtOrBefore(userKey: Uint8Array, inclusive: boolean): void {
    this.#forward = false;
    const iter = this.#iter;
    // Seek just past the key's versions, then step back onto the last entry before them.
    // Exclusive: the all-ones trailer sorts before every version of `userKey`. Inclusive:
    // (key, 0, DELETION) is the last possible internal key of `userKey`; stepping back from it
    // passes over that very entry if it exists, which is safe: as the key's oldest version and
    // a deletion it never changes what the key shows (absent either way).
    const target = this.#buildTarget(userKey, 0, ValueType.DELETION);
    if (!inclusive) target.fill(0xff, userKey.length);
    this.#seekTo(target);
    if (iter.valid()) iter.prev();
    else iter.seekToLast();
    this.#findPrevUserEntry();
  }

  /** After positioning the internal iterator forward: find the entry to show (or none). */
  #afterForwardSeek(skipping: boolean): void {
    if (this.#iter.valid()) this.#findNextUserEntry(skipping);
    else this.#valid = false;
  }

  /**
   * Forward from the internal iterator's entry to the first one that shows a key: the newest
   * visible version of a user key, a value, above the saved key when `skipping`, in bounds.
   */
  #findNextUserEntry(skipping: boolean): void {
    const iter = this.#iter;
    const upper = this.#upper;
    const upperLimit = this.#upperInclusive ? 0 : -1; // compare(key, upper) must be ≤ this
    do {
      const k = iter.key();
      const userLen = userLength(k);
      if (skipping && compareBytes(k, 0, userLen, this.#savedKey, 0, this.#savedKeyLen) <= 0) {
        // An older version of a key already shown or deleted (or a newer, invisible one).
      } else {
        if (upper !== null && compareBytes(k, 0, userLen, upper, 0, upper.length) > upperLimit) break;
        if (this.#visible(k)) {
          if (this.#type === ValueType.VALUE) {
            this.#valid = true;
            return;
          }
          this.#saveKey(k, userLen); // a deletion hides the key's older versions
          skipping = true;
        }
      }
      iter.next();
    } while (iter.valid());
    this.#valid = false;
  }

  /**
   * Backward from the internal iterator's entry: collects the newest visible version of the
   * user key it is in; stops at the first visible entry of an earlier key once it holds a value.
   * Leaves the internal iterator just before the current key's entries (the reverse invariant).
   */
  #findPrevUserEntry(): void {
    const iter = this.#iter;
    const lower = this.#lower;
    const lowerLimit = this.#lowerInclusive ? 0 : 1; // compare(key, lower) must be ≥ this
    let holding = false; // the last visible entry seen (the newest so far) is a value
    while (iter.valid()) {
      const k = iter.key();
      const userLen = userLength(k);
      if (lower !== null && compareBytes(k, 0, userLen, lower, 0, lower.length) < lowerLimit) break;
      if (this.#visible(k)) {
        if (holding && compareBytes(k, 0, userLen, this.#savedKey, 0, this.#savedKeyLen) < 0) break;
        if (this.#type === ValueType.DELETION) {
          holding = false;
          this.#savedKeyLen = 0;
          this.#clearSavedValue();
        } else {
          holding = true;
          this.#saveKey(k, userLen);
          if (!this.#keysOnly) this.#saveValue(iter.value());
        }
      }
      iter.prev();
    }
    if (holding) {
      this.#valid = true;
    } else {
      this.#valid = false;
      this.#forward = true;
      this.#savedKeyLen = 0;
    }
  }

  /** True if the internal key's sequence is ≤ the snapshot; sets #type. CORRUPTION if malformed. */
  #visible(k: Uint8Array): boolean {
    const n = k.length; // ≥ 8: checked by userLength first
    const lo = getFixed32(k, n - 8);
    const hi = getFixed32(k, n - 4);
    const type = lo & 0xff;
    if (type > ValueType.VALUE) throw corruption(`bad value type ${type} in a scan`);
    if (hi >= 0x20000000) throw corruption('sequence number exceeds 2^53 - 1 in a scan');
    this.#type = type;
    return hi * TWO_POW_24 + (lo >>> 8) <= this.#sequence;
  }

  #saveKey(src: Uint8Array, len: number): void {
    const saved = this.#savedKey;
    if (len > saved.length) {
      this.#savedKey = saved.length === 0 ? allocateBytes(Math.max(len, 64)) : new Uint8Array(Math.max(len, 2 * saved.length));
    }
    copyBytes(src, 0, len, this.#savedKey, 0); // a forward scan saves every key: no view for short ones
    this.#savedKeyLen = len;
  }

  #saveValue(src: Uint8Array): void {
    this.#savedValue = copyToBuffer(src, 0, src.length);
    this.#savedValueTaken = false;
  }

  #clearSavedValue(): void {
    this.#savedValue = NO_VALUE_BUFFER;
  }

  /**
   * `userKey ‖ trailer(seq, type)`: in the shared target buffer (a view of it, for one seek), or
   * in a buffer of its own while another seek uses that one or when the target is too long to keep.
   */
  #buildTarget(userKey: Uint8Array, seq: number, type: ValueType): Uint8Array {
    const len = userKey.length + INTERNAL_KEY_TRAILER_SIZE;
    if (targetSeeks > 0 || len > TARGET_KEPT_BYTES) {
      const own = new Uint8Array(len);
      own.set(userKey);
      writeTrailer(own, userKey.length, seq, type);
      return own;
    }
    if (len > targetBytes.length) targetBytes = new Uint8Array(Math.max(len, 2 * targetBytes.length));
    targetBytes.set(userKey);
    writeTrailer(targetBytes, userKey.length, seq, type);
    if (targetView.length !== len) targetView = targetBytes.subarray(0, len);
    return targetView;
  }

  /** The internal iterator's seek to a target from #buildTarget, counted while it runs (`targetSeeks`). */
  #seekTo(target: Uint8Array): void {
    targetSeeks++;
    try {
      this.#iter.seek(target);
    } finally {
      targetSeeks--;
    }
  }

  #guard(): void {
    if (this.#closed) throw new SieveError(ErrorCode.CLOSED, 'iterator is closed');
  }

  #requireValid(): void {
    if (!this.#valid) {
      this.#guard();
      throw invalidArgument('iterator is not positioned at an entry (check valid() first)');
    }
  }

  #failed(err: unknown): unknown {
    this.#valid = false;
    this.#failedOnce = true;
    return err;
  }
}
