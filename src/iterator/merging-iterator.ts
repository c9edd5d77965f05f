/**
 * MergingIterator: one sorted view over N sorted children (memtables, level-0 tables, levels),
 * after LevelDB's table/merger.cc, with a binary heap instead of its linear scan.
 *
 * Order and ties: the merged sequence is ordered by (internal key, child index): when two
 * children hold the same internal key (never the case for a database's sources, whose sequence
 * numbers are unique, but defined anyway) the lower-indexed child's entry comes first. Reverse
 * iteration yields exactly the mirror of that sequence.
 *
 * Invariant, forward: every child other than the current one is positioned at its first entry
 * after the current (key, index) in that order, or is exhausted; the heap holds the valid
 * children, smallest on top. Reverse: every other child is at its last entry before the current
 * one; the heap is a max-heap. A direction switch repositions the other children with one seek
 * each (then one step), as merger.cc does, and rebuilds the heap.
 *
 * Why a heap at every N: each child's key is read once per move of that child and cached, and a
 * step costs O(log N) comparisons. Against merger.cc's linear scan (which re-reads every child's
 * key per step), a forward scan of 300k entries over block iterators measured 90–180 ns/entry vs
 * 130–280 at N = 2 and 250–620 vs 900–2200 at N = 6..16 (busy 2-core machine, Node 20).
 *
 * Windows (a merge's option): when every user key of every child starts with the same
 * `sharedPrefix` bytes (a compaction's inputs do: they lie within their files' recorded bounds),
 * each child's next WINDOW_BYTES user-key bytes after them are read into a number as its key is
 * read, and two children are ordered by those numbers unless they are equal; only then are the
 * keys compared (from byte 0). db_bench's keys share 10 bytes: a comparison walked 11-16 of them,
 * five or six times per merged entry with two dozen level-0 inputs. Each key read is checked to
 * start with the prefix (CORRUPTION if not: an input table holds keys outside its recorded range,
 * which the windows would misorder, and a split merge's part would then stop early and lose keys).
 *
 * Borrowing: `key()`/`value()` are the current child's, valid until this iterator moves. The
 * children are owned: `close()` closes them all.
 */
import type { Comparator } from '../format/comparator.js';
import { bytewiseInternalComparator } from '../format/internal-key-comparator.js';
import { KeyProbes } from '../filter/key-probes.js';
import { allocateBytes } from '../format/byte-arena.js';
import { compareByteRanges } from '../format/bytes.js';
import { INTERNAL_KEY_TRAILER_SIZE } from '../format/internal-key.js';
import { corruption, invalidArgument } from '../errors.js';
import type { InternalIterator } from './internal-iterator.js';

const EMPTY = new Uint8Array(0);

/** User-key bytes a window holds: six fit a double exactly (48 bits). */
export const WINDOW_BYTES = 6;

/**
 * The window of internal key `key`: its user-key bytes [prefix, prefix + WINDOW_BYTES) as a big-
 * endian number, bytes past the user key's end taken as 0. For two keys that share their first
 * `prefix` bytes, windows order as the user keys do, or are equal: a key that ends inside the
 * window reads as itself followed by zeros, which sorts at or before every key it is a prefix of.
 */
export function keyWindow(key: Uint8Array, prefix: number): number {
  const userEnd = key.length - INTERNAL_KEY_TRAILER_SIZE;
  let w = 0;
  for (let i = prefix; i < prefix + WINDOW_BYTES; i++) w = w * 256 + (i < userEnd ? key[i]! : 0);
  return w;
}

export interface MergingIteratorOptions {
  /**
   * Bytes every user key of every child starts with (the bytewise order only): the heap compares
   * windows after them first, and a key read without them is CORRUPTION (see the file comment).
   */
  readonly sharedPrefix?: Uint8Array;
}

export class MergingIterator implements InternalIterator {
  readonly #children: InternalIterator[];
  readonly #compare: Comparator['compare'];
  /** Each valid child's current key (its borrowed view, read once per move of that child). */
  readonly #keys: Uint8Array[];
  /** With a shared prefix: each child's window (keyWindow of its key in #keys), else null. */
  readonly #windows: Float64Array | null;
  readonly #prefix: Uint8Array;
  /** Child indexes of the valid children, heap-ordered; `#heap[0]` is the current child. */
  readonly #heap: Int32Array;
  #size = 0;
  #forward = true;
  /**
   * The heap position (1 or 2) of the top's first-ordered child, or 0 if not known. It stays
   * right while the top child stays on top (positions 1 and 2 do not move, nor do their
   * children), so a step that leaves the top in place costs one comparison instead of two.
   */
  #runnerUp = 0;
  /**
   * Lazy seek (bytewise internal keys only). After `seek(target)`, a child whose `seekIfMayMatch`
   * said no is not sought: it is in the heap with a stand-in key just above every entry of
   * target's user key U (its real entry is above U, so nothing of U can come after it) and is
   * sought when it reaches the top. Entries of U that other children hold come first, so a seek
   * that lands on its key and reads it costs one data block, not one per level. `#deferred[i]` is
   * 1 for such a child; the top is never one. A direction switch, or any other seek, seeks them all.
   */
  readonly #lazy: boolean;
  readonly #deferred: Uint8Array;
  #deferredCount = 0;
  /** The target of the last lazy seek (copied: the caller's buffer may change); U is all but its trailer. */
  #seekTarget: Uint8Array = EMPTY;
  #seekTargetLen = 0;
  /**
   * U as a view of `#seekTarget`, for the probes: reused while U's length is the same (the buffer
   * is replaced only to grow, for a longer target, so a view of the old one never has that length).
   */
  #seekUserKey: Uint8Array = EMPTY;
  #probes: KeyProbes | null = null;

  /**
   * @param children iterators over internal keys in `comparator`'s order (taken over: closed by
   *   `close()`); may be empty, and any may be empty.
   * @param comparator the internal-key order; the bytewise one by default.
   * @param options `sharedPrefix`: the bytes every child's user keys start with (bytewise order only).
   */
  constructor(children: readonly InternalIterator[], comparator: Comparator = bytewiseInternalComparator, options: MergingIteratorOptions = {}) {
    this.#children = children.slice();
    this.#compare = comparator.compare;
    this.#keys = children.map(() => EMPTY);
    const prefix = options.sharedPrefix;
    if (prefix !== undefined && comparator !== bytewiseInternalComparator) {
      throw invalidArgument('sharedPrefix holds only in the bytewise internal-key order');
    }
    this.#prefix = prefix ?? EMPTY;
    // (Only merges have windows: an array of their own, not one of the views below.)
    this.#windows = prefix === undefined ? null : new Float64Array(children.length);
    // Views of the byte arena: typed arrays this small made on their own live inside V8's heap
    // object, slower to index and moved out at their first view (format/byte-arena.ts). They are
    // zeroed by loops: `fill` is a call into the runtime, dearer than a few stores. An iterator is
    // made per seek.
    const heapBytes = allocateBytes(4 * children.length);
    this.#heap = new Int32Array(heapBytes.buffer, heapBytes.byteOffset, children.length);
    this.#deferred = allocateBytes(children.length);
    for (let i = 0; i < children.length; i++) this.#heap[i] = this.#deferred[i] = 0;
    this.#lazy = comparator === bytewiseInternalComparator && children.some((c) => c.seekIfMayMatch !== undefined);
  }

  valid(): boolean {
    return this.#size > 0;
  }

  seekToFirst(): void {
    this.#clearDeferred();
    const children = this.#children;
    for (let i = 0; i < children.length; i++) children[i]!.seekToFirst();
    this.#rebuild(true);
  }

  seekToLast(): void {
    this.#clearDeferred();
    const children = this.#children;
    for (let i = 0; i < children.length; i++) children[i]!.seekToLast();
    this.#rebuild(false);
  }

  seek(target: Uint8Array): void {
    const children = this.#children;
    if (!this.#lazy || target.length < INTERNAL_KEY_TRAILER_SIZE) {
      this.#clearDeferred();
      for (let i = 0; i < children.length; i++) children[i]!.seek(target);
      this.#rebuild(true);
      return;
    }
    const len = target.length;
    if (this.#seekTarget.length < len) this.#seekTarget = allocateBytes(Math.max(len, 2 * this.#seekTarget.length, 64));
    const saved = this.#seekTarget;
    saved.set(target);
    this.#seekTargetLen = len;
    const probes = (this.#probes ??= new KeyProbes());
    const userLen = len - INTERNAL_KEY_TRAILER_SIZE;
    if (this.#seekUserKey.length !== userLen) this.#seekUserKey = saved.subarray(0, userLen);
    probes.reset(this.#seekUserKey);
    this.#clearDeferred();
    const deferred = this.#deferred;
    for (let i = 0; i < children.length; i++) {
      const child = children[i]!;
      if (child.seekIfMayMatch === undefined) {
        child.seek(target);
      } else if (!child.seekIfMayMatch(target, probes)) {
        deferred[i] = 1;
        this.#deferredCount++;
      }
    }
    this.#rebuild(true);
    this.#resolveTop();
  }

  next(): void {
    if (!this.#forward) this.#switchToForward();
    const cur = this.#heap[0]!;
    const child = this.#children[cur]!;
    child.next();
    this.#replaceTop(cur, child);
    if (this.#deferredCount !== 0) this.#resolveTop();
  }

  prev(): void {
    if (this.#forward) this.#switchToReverse();
    const cur = this.#heap[0]!;
    const child = this.#children[cur]!;
    child.prev();
    this.#replaceTop(cur, child);
  }

  /** The current entry's internal key, borrowed until the next move. Requires `valid()`. */
  key(): Uint8Array {
    return this.#keys[this.#heap[0]!]!;
  }

  /** The current entry's value, borrowed until the next move. Requires `valid()`. */
  value(): Uint8Array {
    return this.#children[this.#heap[0]!]!.value();
  }

  /** See InternalIterator.park: parks every child that can be; must be sought before any other use. */
  park(): void {
    this.#size = 0;
    this.#clearDeferred();
    const children = this.#children;
    const keys = this.#keys;
    for (let i = 0; i < children.length; i++) {
      keys[i] = EMPTY;
      children[i]!.park?.();
    }
  }

  /** Closes every child (each close is idempotent, so this is too). */
  close(): void {
    this.#size = 0;
    this.#clearDeferred();
    const children = this.#children;
    let first: unknown;
    for (let i = 0; i < children.length; i++) {
      try {
        children[i]!.close();
      } catch (err) {
        first ??= err; // close the rest anyway: each may pin blocks or files
      }
    }
    const keys = this.#keys;
    for (let i = 0; i < keys.length; i++) keys[i] = EMPTY;
    if (first !== undefined) throw first;
  }

  /**
   * From reverse to forward at the current entry (K, c): child i < c goes to its first key > K,
   * child i > c to its first key ≥ K — the first entries after (K, c) in the merged order.
   */
  #switchToForward(): void {
    const children = this.#children;
    const cur = this.#heap[0]!;
    const target = this.#keys[cur]!; // stays valid: the current child does not move here
    const compare = this.#compare;
    for (let i = 0; i < children.length; i++) {
      if (i === cur) continue;
      const child = children[i]!;
      child.seek(target);
      if (i < cur && child.valid()) {
        const k = child.key();
        if (compare(k, 0, k.length, target, 0, target.length) === 0) child.next();
      }
    }
    this.#rebuild(true);
  }

  /**
   * From forward to reverse at (K, c): child i < c goes to its last key ≤ K, child i > c to its
   * last key < K — the last entries before (K, c) in the merged order.
   */
  #switchToReverse(): void {
    this.#clearDeferred(); // every child but the current one is sought below
    const children = this.#children;
    const cur = this.#heap[0]!;
    const target = this.#keys[cur]!;
    const compare = this.#compare;
    for (let i = 0; i < children.length; i++) {
      if (i === cur) continue;
      const child = children[i]!;
      child.seek(target);
      if (!child.valid()) {
        child.seekToLast();
      } else if (i > cur) {
        child.prev();
      } else {
        const k = child.key();
        if (compare(k, 0, k.length, target, 0, target.length) !== 0) child.prev();
      }
    }
    this.#rebuild(false);
  }

  /**
   * Reads every child's key and heapifies the valid ones for the given direction; a deferred child
   * (only after a lazy seek) is in the heap with its stand-in key.
   */
  #rebuild(forward: boolean): void {
    this.#forward = forward;
    const children = this.#children;
    const keys = this.#keys;
    const heap = this.#heap;
    const deferred = this.#deferred;
    let size = 0;
    for (let i = 0; i < children.length; i++) {
      const child = children[i]!;
      if (deferred[i] !== 0) {
        keys[i] = EMPTY;
        heap[size++] = i;
      } else if (child.valid()) {
        const key = (keys[i] = child.key());
        if (this.#windows !== null) this.#windows[i] = this.#window(key);
        heap[size++] = i;
      } else {
        keys[i] = EMPTY;
      }
    }
    this.#size = size;
    this.#runnerUp = 0;
    for (let i = (size >>> 1) - 1; i >= 0; i--) this.#siftDown(i);
  }

  /** After the top child `cur` moved: re-read its key and restore the heap. */
  #replaceTop(cur: number, child: InternalIterator): void {
    const heap = this.#heap;
    if (!child.valid()) {
      this.#keys[cur] = EMPTY;
      this.#runnerUp = 0;
      const last = --this.#size;
      if (last === 0) return;
      heap[0] = heap[last]!;
      this.#siftDown(0);
      return;
    }
    const key = (this.#keys[cur] = child.key());
    if (this.#windows !== null) this.#windows[cur] = this.#window(key);
    const size = this.#size;
    if (size === 1) return;
    let r = this.#runnerUp;
    if (r === 0) r = size > 2 && this.#before(heap[2]!, heap[1]!) ? 2 : 1;
    if (!this.#before(heap[r]!, cur)) {
      this.#runnerUp = r; // the top stays: nothing below it moved
      return;
    }
    this.#runnerUp = 0;
    this.#sinkTop(r);
  }

  /** Seeks deferred children while one is on top, so that the top is a real entry (or none). */
  #resolveTop(): void {
    const heap = this.#heap;
    const deferred = this.#deferred;
    while (this.#size > 0 && deferred[heap[0]!] !== 0) {
      const i = heap[0]!;
      deferred[i] = 0;
      this.#deferredCount--;
      const child = this.#children[i]!;
      child.seek(this.#seekTarget.subarray(0, this.#seekTargetLen));
      this.#replaceTop(i, child);
    }
  }

  /** Forgets the deferred children (each is sought, or about to be, by the caller). */
  #clearDeferred(): void {
    if (this.#deferredCount === 0) return;
    const deferred = this.#deferred;
    for (let i = 0; i < deferred.length; i++) deferred[i] = 0;
    this.#deferredCount = 0;
  }

  /**
   * `#before` when `a` or `b` is deferred (forward only): a stand-in sorts after every entry of
   * the target's user key U and before every entry above U, so a real entry of U comes first, and
   * a deferred child comes before any real entry above U (its own may be smaller). Two stand-ins
   * are equal: the lower index first.
   */
  #beforeDeferred(a: number, b: number): boolean {
    const deferred = this.#deferred;
    if (deferred[a] !== 0 && deferred[b] !== 0) return a < b;
    const realKey = this.#keys[deferred[a] !== 0 ? b : a]!;
    const u = this.#seekTarget;
    const uLen = this.#seekTargetLen - INTERNAL_KEY_TRAILER_SIZE;
    const realUserLen = realKey.length < INTERNAL_KEY_TRAILER_SIZE ? 0 : realKey.length - INTERNAL_KEY_TRAILER_SIZE;
    const realAboveU = compareByteRanges(realKey, 0, realUserLen, u, 0, uLen) > 0;
    return deferred[a] !== 0 ? realAboveU : !realAboveU;
  }

  /** `key`'s window after the shared prefix, which it must start with (else CORRUPTION). */
  #window(key: Uint8Array): number {
    const prefix = this.#prefix;
    const n = prefix.length;
    const ok = key.length - INTERNAL_KEY_TRAILER_SIZE >= n && compareByteRanges(key, 0, n, prefix, 0, n) === 0;
    if (!ok) throw corruption('a merge input holds a key outside its table\'s recorded key range');
    return keyWindow(key, n);
  }

  /** True if child `a`'s entry comes before child `b`'s in the current direction. */
  #before(a: number, b: number): boolean {
    if (this.#deferredCount !== 0 && (this.#deferred[a]! | this.#deferred[b]!) !== 0) return this.#beforeDeferred(a, b);
    const windows = this.#windows;
    if (windows !== null) {
      const wa = windows[a]!;
      const wb = windows[b]!;
      if (wa !== wb) return this.#forward ? wa < wb : wa > wb;
    }
    const ka = this.#keys[a]!;
    const kb = this.#keys[b]!;
    const c = this.#compare(ka, 0, ka.length, kb, 0, kb.length);
    if (this.#forward) return c < 0 || (c === 0 && a < b);
    return c > 0 || (c === 0 && a > b);
  }

  /**
   * Restores the heap after the top's entry moved on and now comes after `first`, the first of its
   * two children (Floyd's bottom-up sift): the first-ordered children move up along the path to a
   * leaf, one comparison per level, and the moved entry then climbs back from there. It usually
   * belongs near the bottom, so this compares about log2(size) + 1 times where #siftDown compares
   * twice per level: with a deep level 0, a merge's children are two dozen tables.
   */
  #sinkTop(first: number): void {
    const heap = this.#heap;
    const size = this.#size;
    const item = heap[0]!;
    let pos = 0;
    let child = first;
    for (;;) {
      heap[pos] = heap[child]!;
      pos = child;
      child = 2 * pos + 1;
      if (child >= size) break;
      const right = child + 1;
      if (right < size && this.#before(heap[right]!, heap[child]!)) child = right;
    }
    while (pos > 0) {
      const parent = (pos - 1) >>> 1;
      if (!this.#before(item, heap[parent]!)) break;
      heap[pos] = heap[parent]!;
      pos = parent;
    }
    heap[pos] = item;
  }

  #siftDown(pos: number): void {
    const heap = this.#heap;
    const size = this.#size;
    const item = heap[pos]!;
    for (;;) {
      let child = 2 * pos + 1;
      if (child >= size) break;
      const right = child + 1;
      if (right < size && this.#before(heap[right]!, heap[child]!)) child = right;
      if (!this.#before(heap[child]!, item)) break;
      heap[pos] = heap[child]!;
      pos = child;
    }
    heap[pos] = item;
  }
}

/**
 * A merged view of `children`: the child itself when there is one (no merging cost), an empty
 * iterator when there is none, else a MergingIterator. Takes ownership of the children.
 */
export function newMergingIterator(
  children: readonly InternalIterator[],
  comparator: Comparator = bytewiseInternalComparator,
): InternalIterator {
  if (children.length === 1) return children[0]!;
  return new MergingIterator(children, comparator);
}
