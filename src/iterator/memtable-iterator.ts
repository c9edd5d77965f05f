/**
 * The memtable seen as an InternalIterator: the merging iterator and the flush read it like any
 * table. The skiplist stores (user key, sequence, type) apart; this adapter shows each entry as
 * the internal key `user key ‖ fixed64(seq << 8 | type)`, built on demand into one reused buffer.
 *
 * Borrowing: `key()` is a view of that buffer, valid until the iterator moves (the buffer is
 * rewritten, and replaced when it grows). `value()` is a view of the memtable's arena, which the
 * memtable does not overwrite while the iterator is open, but callers must still treat it as
 * borrowed (the contract).
 *
 * Owned by the database's JavaScript thread, like the memtable. Made from a memtable, the iterator
 * pins it (MemTable.pin) until `close()`, so a flushed memtable's arena is not recycled under it;
 * `close()` also drops the position. Made from a MemTableIterator it pins nothing: whoever made
 * that iterator keeps its memtable alive.
 */
import type { KeyProbes } from '../filter/key-probes.js';
import { allocateBytes } from '../format/byte-arena.js';
import { getFixed32, putFixed32 } from '../format/coding.js';
import { compareByteRanges as compareBytes } from '../format/bytes.js';
import { INTERNAL_KEY_TRAILER_SIZE, MAX_SEQUENCE } from '../format/internal-key.js';
import type { MemTable, MemTableIterator } from '../memtable/memtable.js';
import type { InternalIterator } from './internal-iterator.js';

const EMPTY = new Uint8Array(0);
const TWO_POW_24 = 16777216;
/** Below this many bytes a JS loop copies faster than `set` (a native call). */
const SMALL_COPY = 16;
/** A trailer's high half at or above this means a sequence above MAX_SEQUENCE (2^53 − 1). */
const HI_ABOVE_MAX_SEQUENCE = 0x20000000;

export class MemTableInternalIterator implements InternalIterator {
  readonly #it: MemTableIterator;
  /** The memtable pinned until close, if the iterator was made from one. */
  #pinned: MemTable | null = null;
  #closed = false;
  #keyBuf = allocateBytes(64);
  /** The current internal key as a view of #keyBuf, or null when not built since the last move. */
  #key: Uint8Array | null = null;
  /** The last view of #keyBuf handed out, reused while the key length stays the same. */
  #view: Uint8Array = EMPTY;

  /** Iterates `source` (a memtable, or one of its iterators, which this adapter then owns). */
  constructor(source: MemTable | MemTableIterator) {
    if ('iterator' in source) {
      source.pin();
      this.#pinned = source;
      this.#it = source.iterator();
    } else {
      this.#it = source;
    }
  }

  valid(): boolean {
    return this.#it.valid;
  }

  seekToFirst(): void {
    this.#key = null;
    this.#it.seekToFirst();
  }

  seekToLast(): void {
    this.#key = null;
    this.#it.seekToLast();
  }

  /**
   * The first entry ≥ `target` in internal-key order. The target's parts decide exactly: user
   * key, then sequence descending, then type descending — so with an entry (k, s, VALUE) and the
   * target (k, s, DELETION) the entry sorts first and the seek lands after it. A target sequence
   * above MAX_SEQUENCE (LevelDB's 2^56 − 1 sentinel) precedes every stored version of its key.
   * A malformed target (< 8 bytes) orders as an empty user key with a zero trailer, as in
   * `compareInternalKeys`.
   */
  seek(target: Uint8Array): void {
    this.#key = null;
    const it = this.#it;
    const n = target.length;
    if (n < INTERNAL_KEY_TRAILER_SIZE) {
      this.#seekParts(EMPTY, 0, 0);
      return;
    }
    const userKey = target.subarray(0, n - INTERNAL_KEY_TRAILER_SIZE);
    const lo = getFixed32(target, n - 8);
    const hi = getFixed32(target, n - 4);
    if (hi >= HI_ABOVE_MAX_SEQUENCE) {
      // Every stored sequence is ≤ MAX_SEQUENCE < the target's: all versions of the key follow it.
      it.seek(userKey, MAX_SEQUENCE);
      return;
    }
    this.#seekParts(userKey, hi * TWO_POW_24 + (lo >>> 8), lo & 0xff);
  }

  /**
   * See InternalIterator.seekIfMayMatch: false, without searching the list, if the memtable's
   * Bloom filter holds no entry of the target's user key (the seek would land on a larger key);
   * else `seek` and true. Only an iterator made from a memtable asks its filter.
   */
  seekIfMayMatch(target: Uint8Array, _probes: KeyProbes): boolean {
    const mem = this.#pinned;
    const n = target.length;
    if (mem !== null && n >= INTERNAL_KEY_TRAILER_SIZE && !mem.mayContainUserKey(target, 0, n - INTERNAL_KEY_TRAILER_SIZE)) {
      this.#key = null;
      return false;
    }
    this.seek(target);
    return true;
  }

  #seekParts(userKey: Uint8Array, seq: number, type: number): void {
    const it = this.#it;
    it.seek(userKey, seq);
    // The skiplist orders by (key, seq) only; an entry with the target's key and sequence but a
    // larger type sorts before the target (trailer descending), so step past it.
    if (it.valid && it.seq === seq && it.type > type) {
      const k = it.key;
      if (compareBytes(k, 0, k.length, userKey, 0, userKey.length) === 0) it.next();
    }
  }

  next(): void {
    this.#key = null;
    this.#it.next();
  }

  /** O(log n): the skiplist has no back links (a search from the head, as in LevelDB). */
  prev(): void {
    this.#key = null;
    this.#it.prev();
  }

  /**
   * The current internal key, borrowed until the next move. Requires `valid()`. When the length
   * is unchanged the previous view object is returned again with new contents (allowed by the
   * borrowing contract), so scans over fixed-size keys allocate no key views here.
   */
  key(): Uint8Array {
    if (this.#key !== null) return this.#key;
    const it = this.#it;
    const userKey = it.key;
    const userLen = userKey.length;
    const len = userLen + INTERNAL_KEY_TRAILER_SIZE;
    let buf = this.#keyBuf;
    if (len > buf.length) {
      buf = this.#keyBuf = new Uint8Array(Math.max(len, 2 * buf.length));
      this.#view = EMPTY;
    }
    if (userLen <= SMALL_COPY) {
      for (let i = 0; i < userLen; i++) buf[i] = userKey[i]!;
    } else {
      buf.set(userKey, 0);
    }
    // The skiplist's sequences are in [0, MAX_SEQUENCE] and its types 0 or 1 (the memtable
    // writes only those), so the trailer is packed without writeTrailer's checks.
    const seq = it.seq;
    const hi = Math.floor(seq / TWO_POW_24);
    putFixed32(buf, userLen, (((seq - hi * TWO_POW_24) << 8) | it.type) >>> 0);
    putFixed32(buf, userLen + 4, hi);
    const view = this.#view.length === len ? this.#view : (this.#view = buf.subarray(0, len));
    return (this.#key = view);
  }

  /** The current value (empty for a deletion). Requires `valid()`. */
  value(): Uint8Array {
    return this.#it.value;
  }

  /** Leaves the iterator invalid and unpins its memtable (if it pinned one). Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#key = null;
    this.#it.seekBefore(EMPTY, MAX_SEQUENCE); // nothing sorts before (empty key, max seq): invalid
    this.#pinned?.unpin();
    this.#pinned = null;
  }
}
