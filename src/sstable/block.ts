/**
 * Reads blocks made by BlockBuilder (or LevelDB's block_builder.cc): `Block` validates the
 * restart array once; `BlockIterator` walks the entries (after LevelDB's table/block.cc).
 *
 * Safety contract: a block's bytes are untrusted. The constructor checks the restart count and
 * every restart offset against the size; every entry decode checks its varints, that `shared`
 * does not exceed the previous key, and that key and value lie before the restart array. Any
 * violation throws CORRUPTION naming the block's file and file offset (and the position inside
 * the block in the message); nothing reads out of range and every step advances at least 3 bytes,
 * so iteration always ends.
 *
 * Borrowing: the current key lives in the iterator's reused buffer `keyBuf[0, keyLen)` and the
 * current value is `data[valueStart, valueEnd)` inside the block. Both stay valid only until the
 * iterator moves (`keyBuf` may be replaced when it grows: read the field again after each move).
 * `key()` / `value()` return views with the same lifetime. Comparisons against them go through
 * the comparator's range form, so seeking and comparing allocate nothing.
 */
import { corruption, invalidArgument } from '../errors.js';
import { allocateBytes } from '../format/byte-arena.js';
import { getFixed32 } from '../format/coding.js';
import type { Comparator } from '../format/comparator.js';
import { INTERNAL_KEY_TRAILER_SIZE } from '../format/internal-key.js';
import { buildIndexHandles, INDEX_HANDLES_AFTER_LOOKUPS } from './index-handles.js';
import {
  buildRestartWindows,
  type RestartWindows,
  usesBytewiseInternalKeys,
  windowOf,
  WINDOWS_AFTER_SEEKS,
  WINDOWS_MIN_RESTARTS,
} from './restart-windows.js';

/**
 * An immutable, validated block (shared freely, e.g. through the block cache). Its contents are
 * `data[0, size)`: a data block read by a table may sit in longer bytes (a size class of the block
 * pool, below). A block's fields never change while anyone can reach it; the pool sets them again
 * only for a block nobody holds any more.
 */
export class Block {
  /** The block contents (uncompressed, without trailer) are `data[0, size)`. */
  data: Uint8Array;
  size = 0;
  /** Offset of the restart array: entries occupy `data[0, restartOffset)`. */
  restartOffset = 0;
  numRestarts = 0;
  /** For errors: the file the block came from and the file offset of its handle. */
  file: string | undefined;
  offset: number | undefined;
  /**
   * Recycling: the block goes back to the block pool (object and bytes) once it is dropped (the
   * cache let go of it, or never held it) and no iterator pins it. `recyclable`: its bytes are a
   * size class's, from `takeBlockBytes`, and the block is not in the pool yet. Point lookups do
   * not pin: they copy what they find before the next block read.
   */
  recyclable = false;
  private pins = 0;
  private dropped = false;
  /** Seeks made so far, counted up to WINDOWS_AFTER_SEEKS (restart-windows.ts). */
  seekCount = 0;
  /** The restart windows, once built; null before, or if the block cannot have them. */
  windows: RestartWindows | null = null;
  /**
   * The entries' block handles (index-handles.ts), built by the INDEX_HANDLES_AFTER_LOOKUPS-th
   * point lookup that finds the windows built; undefined before, null if the block cannot have them.
   */
  indexHandles: Float64Array | null | undefined = undefined;
  /** Point lookups that found the windows built, counted up to INDEX_HANDLES_AFTER_LOOKUPS. */
  indexLookups = 0;

  constructor(contents: Uint8Array, file?: string, offset?: number, size: number = contents.length) {
    this.data = contents;
    this.init(size, file, offset);
  }

  /** Validates `data[0, size)` as a block and sets the fields that describe it. */
  private init(size: number, file: string | undefined, offset: number | undefined): void {
    const contents = this.data;
    this.size = size;
    this.file = file;
    this.offset = offset;
    if (size < 4) throw corruption(`block too short (${size} bytes)`, { file, offset });
    const n = getFixed32(contents, size - 4);
    if (n > (size - 4) / 4) {
      throw corruption(`block restart count ${n} does not fit in ${size} bytes`, { file, offset });
    }
    this.numRestarts = n;
    this.restartOffset = size - 4 * (n + 1);
    if (n === 0) {
      // LevelDB never writes this; accept only the degenerate block with no entries at all.
      if (this.restartOffset !== 0) throw corruption('block has entries but no restart points', { file, offset });
      return;
    }
    let prev = getFixed32(contents, this.restartOffset);
    if (prev !== 0) throw corruption(`first restart point is ${prev}, not 0`, { file, offset });
    for (let i = 1; i < n; i++) {
      const r = getFixed32(contents, this.restartOffset + 4 * i);
      if (r <= prev || r >= this.restartOffset) {
        throw corruption(`restart point ${i} (${r}) out of order or past the entries`, { file, offset });
      }
      prev = r;
    }
  }

  /** An iterator holds the block: its bytes stay until it calls `unpin`. */
  pin(): void {
    this.pins++;
  }

  /** The iterator that pinned the block let go of it. */
  unpin(): void {
    if (--this.pins === 0 && this.dropped) this.recycle();
  }

  /** The block cache let go of the block: its bytes are recycled once no iterator pins it. */
  drop(): void {
    this.dropped = true;
    if (this.pins === 0) this.recycle();
  }

  /**
   * The block is not cached and its reader is an iterator, which pins it at once: its bytes are
   * recycled when the last pin goes (as `drop`, without recycling now).
   */
  markUncached(): void {
    this.dropped = true;
  }

  private recycle(): void {
    if (!this.recyclable) return;
    this.recyclable = false;
    const classBytes = this.data.length;
    if (pooledBytes + classBytes > POOL_MAX_BYTES) return; // left to the garbage collector
    if (poison) this.data.fill(0xa5);
    pool[classBytes >>> POOL_CLASS_SHIFT]!.push(this);
    pooledBytes += classBytes;
  }

  /**
   * The block a decoder wrote into `contents`: the bytes `takeBlockBytes` returned last (a pooled
   * block's, or new ones of its size class), or bytes of the decoder's own. Validated as the
   * constructor does (CORRUPTION naming `file` and `offset`); a pooled block is set up anew.
   */
  static fromTaken(contents: Uint8Array, file: string, offset: number): Block {
    if (contents !== takenBytes) return new Block(contents, file, offset);
    takenBytes = null;
    let block = takenBlock;
    takenBlock = null;
    if (block === null) {
      block = new Block(contents, file, offset, takenLength);
    } else {
      block.pins = 0;
      block.dropped = false;
      block.setUpAgain(takenLength, file, offset);
    }
    block.recyclable = takenLength <= POOL_MAX_BLOCK; // else bytes of its own, not a class's
    return block;
  }

  /**
   * `block` set up anew over `contents[0, size)` if they are its bytes (its owner alone reaches it:
   * a lookup's scratch), else a new block of them; validated as the constructor does.
   */
  static reuse(block: Block | null, contents: Uint8Array, size: number, file: string, offset: number): Block {
    if (block === null || block.data !== contents) return new Block(contents, file, offset, size);
    block.setUpAgain(size, file, offset);
    return block;
  }

  /** A block nobody else reaches, set up over `data[0, size)` as if new: no seeks counted, no windows. */
  private setUpAgain(size: number, file: string, offset: number): void {
    this.seekCount = 0;
    this.windows = null;
    this.indexHandles = undefined;
    this.indexLookups = 0;
    this.init(size, file, offset);
  }

  /** Offset of restart point `i` (requires `0 <= i < numRestarts`). */
  restartPoint(i: number): number {
    return getFixed32(this.data, this.restartOffset + 4 * i);
  }

  /** A new iterator over this block, ordered by `comparator`. */
  newIterator(comparator: Comparator): BlockIterator {
    return new BlockIterator(comparator, this);
  }
}

/**
 * The block pool: blocks nobody holds any more (dropped by the cache, unpinned), by size class,
 * each with its bytes. A data block read takes one (`takeBlockBytes`, then `Block.fromTaken`), so a
 * loop of cache misses makes no object, view or bytes that outlive it: each read's block lived in
 * the cache long enough to survive young collections, and V8 grew its young generation to the
 * limit and promoted the rest. Classes are multiples of POOL_CLASS_BYTES up to POOL_MAX_BLOCK;
 * larger blocks get bytes of their own and are left to the garbage collector. One pool per thread.
 */
const POOL_CLASS_SHIFT = 9;
const POOL_CLASS_BYTES = 1 << POOL_CLASS_SHIFT;
const POOL_MAX_BLOCK = 64 * 1024;
/** At most this many bytes wait in the pool; blocks let go of beyond it are left to the collector. */
const POOL_MAX_BYTES = 1024 * 1024;
const pool: Block[][] = Array.from({ length: (POOL_MAX_BLOCK >>> POOL_CLASS_SHIFT) + 1 }, () => []);
let pooledBytes = 0;
/** What the last `takeBlockBytes` returned, for `Block.fromTaken`: the bytes, their block if pooled, the length asked. */
let takenBytes: Uint8Array | null = null;
let takenBlock: Block | null = null;
let takenLength = 0;
let poison = false;

/**
 * Bytes for a decoder to write a data block of `length` bytes into, at `[0, length)`; may be
 * longer. `Block.fromTaken` then makes the block of them. Pooled bytes are reused as they are.
 */
export function takeBlockBytes(length: number): Uint8Array {
  takenLength = length;
  takenBlock = null;
  if (length > POOL_MAX_BLOCK) return (takenBytes = new Uint8Array(length));
  const sizeClass = (length + POOL_CLASS_BYTES - 1) >>> POOL_CLASS_SHIFT;
  const block = pool[sizeClass]!.pop();
  if (block === undefined) return (takenBytes = allocateBytes(sizeClass << POOL_CLASS_SHIFT));
  pooledBytes -= block.data.length;
  takenBlock = block;
  return (takenBytes = block.data);
}

/** @internal Tests: overwrite a pooled block's bytes with 0xa5, so a read after it was let go shows. */
export function setPooledBlockPoison(on: boolean): void {
  poison = on;
}

/**
 * A cursor over one block's entries. Not positioned until a seek. Reusable across blocks with
 * `setBlock` (the table reader keeps one per use instead of allocating per lookup).
 */
/** Numbers the run cache keeps per entry (see BlockIterator.runEntries). */
const RUN_FIELDS = 5;
const NO_RUN_ENTRIES = new Int32Array(0);
const NO_RUN_KEYS = new Uint8Array(0);
/** A block iterator's key view before its first key: empty, so one for all of them. */
const NO_KEY_VIEW = new Uint8Array(0);

export class BlockIterator {
  readonly comparator: Comparator;
  private block: Block;
  /** The block contents; the current value is `data[valueStart, valueEnd)`. */
  data: Uint8Array;
  /** The current key is `keyBuf[0, keyLen)`; the buffer is reused and may be replaced. */
  keyBuf: Uint8Array = allocateBytes(64);
  keyLen = 0;
  valueStart = 0;
  valueEnd = 0;
  private restartOffset: number;
  /** Offset of the current entry; `restartOffset` when not valid. */
  private current: number;
  /** Offset just past the current entry (where the next one starts). */
  private nextOffset = 0;
  /** The restart region holding the current entry. */
  private restartIndex = 0;
  // Out-parameters of decodeHeader (fields, not an allocated tuple).
  private hShared = 0;
  private hNonShared = 0;
  private hValueLen = 0;
  /**
   * The restart run `prev` (or `seekToLast`) decoded last, so that the next `prev`s step back
   * through it without decoding the run again (RocksDB's BlockIter keeps such a cache too): per
   * entry RUN_FIELDS numbers (offset, key start in `runKeys`, key length, value start, value
   * end), its keys in `runKeys`. `runPos` is the current entry's index in it, -1 when the run does
   * not describe the current entry; `runData` the block contents it was decoded from.
   */
  private runEntries = NO_RUN_ENTRIES; // made on the first prev: most iterators never step back
  private runKeys = NO_RUN_KEYS;
  private runPos = -1;
  private runData: Uint8Array | null = null;

  constructor(comparator: Comparator, block: Block) {
    this.comparator = comparator;
    this.block = block;
    this.data = block.data;
    this.restartOffset = block.restartOffset;
    this.current = block.restartOffset;
  }

  /** Bytes of its own the iterator keeps between blocks: its key buffer and the reverse-run cache. */
  get retainedBytes(): number {
    return this.keyBuf.length + this.runKeys.length + this.runEntries.byteLength;
  }

  /** Re-targets the iterator at `block` (unpositioned); keeps the key buffer. */
  setBlock(block: Block): void {
    this.block = block;
    this.data = block.data;
    this.restartOffset = block.restartOffset;
    this.invalidate();
  }

  valid(): boolean {
    return this.current < this.restartOffset;
  }

  /** The last view `key` made, and the buffer it views: reused while both still fit. */
  private keyView: Uint8Array = NO_KEY_VIEW; // returned only once keyViewOf is keyBuf
  private keyViewOf: Uint8Array | null = null;

  /**
   * The current key as a view borrowed until the iterator moves. Requires `valid()`. The view is
   * made again only when the key's length or `keyBuf` changed: keys of one length (most tables')
   * cost no allocation per entry.
   */
  key(): Uint8Array {
    const view = this.keyView;
    if (view.length === this.keyLen && this.keyViewOf === this.keyBuf) return view;
    this.keyViewOf = this.keyBuf;
    return (this.keyView = this.keyBuf.subarray(0, this.keyLen));
  }

  /** The current value as a view into the block, valid as long as the block's bytes. */
  value(): Uint8Array {
    return this.data.subarray(this.valueStart, this.valueEnd);
  }

  seekToFirst(): void {
    if (this.block.numRestarts === 0) return this.invalidate();
    this.seekToRestartPoint(0);
    this.parseNext();
  }

  seekToLast(): void {
    if (this.block.numRestarts === 0) return this.invalidate();
    this.decodeRunUntil(this.block.numRestarts - 1, this.restartOffset);
  }

  /**
   * Positions at the first entry with key >= `target[targetStart, targetEnd)`, or invalid if
   * none: binary search over the restart points (comparing their keys in place), then a linear
   * scan within the region.
   */
  seek(target: Uint8Array, targetStart = 0, targetEnd: number = target.length): void {
    const block = this.block;
    const cmp = this.comparator;
    if (block.numRestarts === 0) return this.invalidate();
    let left = 0;
    let right = block.numRestarts - 1;
    const windows = right + 1 >= WINDOWS_MIN_RESTARTS ? this.windowsOf(block) : null;
    if (windows !== null && this.sharesPrefix(windows, target, targetStart, targetEnd)) {
      left = this.searchWindows(windows, target, targetStart, targetEnd);
      // The key at `left` (> 0) sorts before the target and the one at left + 1, if any, does not:
      // when the region at `left` is that one entry (every region of an index block), the answer
      // is the next restart point's entry, with nothing to scan.
      if (left > 0 && this.singleEntryRegion(left)) {
        if (left + 1 === block.numRestarts) return this.invalidate();
        this.seekToRestartPoint(left + 1);
        this.parseNext();
        return;
      }
    } else {
      while (left < right) {
        const mid = (left + right + 1) >>> 1;
        if (this.restartKeyBelow(mid, target, targetStart, targetEnd)) {
          left = mid; // the key at mid < target: everything before mid is too small
        } else {
          right = mid - 1; // the key at mid >= target: the answer is in an earlier region or at mid
        }
      }
    }
    this.seekToRestartPoint(left);
    if (usesBytewiseInternalKeys(cmp) && targetEnd - targetStart >= INTERNAL_KEY_TRAILER_SIZE) {
      this.scanToInternalKey(target, targetStart, targetEnd);
      return;
    }
    for (;;) {
      if (!this.parseNext()) return;
      if (cmp.compare(this.keyBuf, 0, this.keyLen, target, targetStart, targetEnd) >= 0) return;
    }
  }

  /**
   * A point lookup's seek in a table's index block (Table.get): the number of the first entry at
   * or after the internal key `target` (numRestarts if none), found through the block's restart
   * windows, decoding only the keys the windows tie on (and the first key, if the search ends
   * there); its handle is then in `block.indexHandles` (indexHandleInto). -1 where the windows or
   * the handles are not there, or the target lacks the windows' prefix: the caller seeks. The
   * handles promise every region is one entry, which makes the entry after the search's answer
   * the one sought. The windows are built by `seek` (this call does not count as one of its
   * seeks), the handles here at the INDEX_HANDLES_AFTER_LOOKUPS-th call. Does not move the
   * iterator.
   */
  findIndexEntry(target: Uint8Array): number {
    const block = this.block;
    const windows = block.windows;
    if (windows === null || !usesBytewiseInternalKeys(this.comparator)) return -1;
    let handles = block.indexHandles;
    if (handles === undefined) {
      if (++block.indexLookups < INDEX_HANDLES_AFTER_LOOKUPS) return -1;
      handles = block.indexHandles = buildIndexHandles(block);
    }
    if (handles === null || !this.sharesPrefix(windows, target, 0, target.length)) return -1;
    const left = this.searchWindows(windows, target, 0, target.length);
    // As in `seek`, the key at `left` (> 0) sorts before the target and the one after it, if any,
    // does not: that one, a region of its own. At 0 the first key itself decides.
    if (left > 0) return left + 1;
    return this.restartKeyBelow(0, target, 0, target.length) ? 1 : 0;
  }

  /**
   * The binary search of `seek` over restart windows (the target shares their prefix): the last
   * restart point whose key sorts before the target, or 0 (whose key may not).
   */
  private searchWindows(windows: RestartWindows, target: Uint8Array, targetStart: number, targetEnd: number): number {
    let left = 0;
    let right = this.block.numRestarts - 1;
    const w = windows.windows;
    const low = windows.lowWindows;
    const userEnd = targetEnd - INTERNAL_KEY_TRAILER_SIZE;
    const targetWindow = windowOf(target, targetStart, userEnd, windows.prefixLength);
    const targetLow = windowOf(target, targetStart, userEnd, windows.prefixLength + 4);
    while (left < right) {
      const mid = (left + right + 1) >>> 1;
      const window = w[mid]!;
      let below: boolean;
      if (window !== targetWindow) below = window < targetWindow;
      else {
        const lowWindow = low[mid]!;
        below = lowWindow !== targetLow ? lowWindow < targetLow : this.restartKeyBelow(mid, target, targetStart, targetEnd);
      }
      if (below) left = mid;
      else right = mid - 1;
    }
    return left;
  }

  /**
   * The linear part of `seek` for bytewise internal keys: steps forward to the first entry at or
   * after the internal key `target[targetStart, targetEnd)`, comparing only what the block's prefix
   * compression leaves open. With d the first byte where the last key's user key differs from the
   * target's (the last key sorting lower), an entry that shares s > d bytes with the last key keeps
   * its lower byte d: it sorts before the target, uncompared. One that shares s ≤ d bytes equals the
   * target up to byte s: it is compared from there. (Only the bytes an entry says it shares are
   * trusted, not that they are all it could share: a restart entry shares none.)
   *
   * An entry passed over uncompared is not made current: its key delta is not copied. keyBuf then
   * still holds the last compared key, whose first d + 1 bytes every entry passed over shares, and
   * the next entry compared shares at most d bytes: its key is keyBuf's prefix and its own delta.
   */
  private scanToInternalKey(target: Uint8Array, targetStart: number, targetEnd: number): void {
    const targetUserLen = targetEnd - targetStart - INTERNAL_KEY_TRAILER_SIZE;
    const limit = this.restartOffset;
    let d = -1; // where the last key's user key and the target's first differ (-1: not known)
    let p = this.nextOffset;
    let previousLen = this.keyLen; // of the entry before p, compared or passed over
    for (;;) {
      if (p >= limit) return this.invalidate();
      const keyStart = this.decodeHeader(p);
      const s = this.hShared;
      if (s > previousLen) this.fail(`entry shares ${s} bytes of a ${previousLen}-byte key`, p);
      const keyLen = s + this.hNonShared;
      const next = keyStart + this.hNonShared + this.hValueLen;
      const userLen = keyLen - INTERNAL_KEY_TRAILER_SIZE;
      previousLen = keyLen;
      let i = 0;
      if (d >= 0) {
        if (s > d && d < userLen) {
          p = next;
          continue;
        }
        i = s < d ? s : d;
      }
      this.takeEntry(p, keyStart);
      p = next;
      const key = this.keyBuf;
      const n = userLen < targetUserLen ? userLen : targetUserLen;
      while (i < n && key[i] === target[targetStart + i]) i++;
      if (i < n) {
        if (key[i]! > target[targetStart + i]!) return this.settleRestartIndex();
        d = i;
        continue;
      }
      // One user key is a prefix of the other, or they are equal: the whole order decides, and the
      // next entry is compared from its start.
      if (this.comparator.compare(key, 0, keyLen, target, targetStart, targetEnd) >= 0) return this.settleRestartIndex();
      d = -1;
    }
  }

  /** True if restart region `i` holds one entry: the one at its restart point. */
  private singleEntryRegion(i: number): boolean {
    const block = this.block;
    const p = block.restartPoint(i);
    const end = this.decodeHeader(p) + this.hNonShared + this.hValueLen;
    return end === (i + 1 < block.numRestarts ? block.restartPoint(i + 1) : this.restartOffset);
  }

  /** True if the key at restart point `i` sorts before the target. */
  private restartKeyBelow(i: number, target: Uint8Array, targetStart: number, targetEnd: number): boolean {
    const regionOffset = this.block.restartPoint(i);
    const keyStart = this.decodeHeader(regionOffset);
    if (this.hShared !== 0) this.fail('restart point entry shares a key prefix', regionOffset);
    return this.comparator.compare(this.data, keyStart, keyStart + this.hNonShared, target, targetStart, targetEnd) < 0;
  }

  /**
   * The block's restart windows if it has (or now gets) them and this iterator's order is theirs;
   * counts the block's seeks until they are built.
   */
  private windowsOf(block: Block): RestartWindows | null {
    if (block.seekCount < WINDOWS_AFTER_SEEKS) {
      if (++block.seekCount < WINDOWS_AFTER_SEEKS || !usesBytewiseInternalKeys(this.comparator)) return null;
      block.windows = buildRestartWindows(block);
    }
    return block.windows !== null && usesBytewiseInternalKeys(this.comparator) ? block.windows : null;
  }

  /** True if the target is an internal key whose user key starts with the windows' prefix. */
  private sharesPrefix(windows: RestartWindows, target: Uint8Array, targetStart: number, targetEnd: number): boolean {
    const n = windows.prefixLength;
    if (targetEnd - targetStart - INTERNAL_KEY_TRAILER_SIZE < n) return false;
    const data = this.data;
    const p = windows.prefixStart;
    for (let i = 0; i < n; i++) if (data[p + i] !== target[targetStart + i]) return false;
    return true;
  }

  /** Moves to the next entry (invalid after the last). Requires `valid()`. */
  next(): void {
    if (!this.valid()) throw invalidArgument('BlockIterator.next on an unpositioned iterator');
    this.parseNext();
  }

  /**
   * Moves to the previous entry (invalid before the first). Requires `valid()`. Entries are only
   * decodable forwards, so this restarts from the last restart point before the current entry.
   */
  prev(): void {
    if (!this.valid()) throw invalidArgument('BlockIterator.prev on an unpositioned iterator');
    const original = this.current;
    const pos = this.runPos;
    if (pos > 0 && this.runData === this.data && this.runEntries[pos * RUN_FIELDS] === original) {
      this.restoreRunEntry(pos - 1);
      return;
    }
    while (this.block.restartPoint(this.restartIndex) >= original) {
      if (this.restartIndex === 0) return this.invalidate();
      this.restartIndex--;
    }
    this.decodeRunUntil(this.restartIndex, original);
    if (this.valid() && this.nextOffset !== original) {
      this.fail('entries do not line up with the restart points', this.current);
    }
  }

  /**
   * Decodes restart run `index` from its restart point up to the entry that ends at or past
   * `end`, recording each entry in the run cache, and stays on that entry (invalid if the block
   * ends first).
   */
  private decodeRunUntil(index: number, end: number): void {
    this.seekToRestartPoint(index);
    this.runData = this.data;
    let count = 0;
    while (this.parseNext()) {
      this.recordRunEntry(count++);
      if (this.nextOffset >= end) break;
    }
    this.runPos = this.valid() ? count - 1 : -1;
  }

  private recordRunEntry(i: number): void {
    const at = i * RUN_FIELDS;
    if (at + RUN_FIELDS > this.runEntries.length) {
      const grown = new Int32Array(Math.max(RUN_FIELDS * 16, 2 * this.runEntries.length));
      grown.set(this.runEntries);
      this.runEntries = grown;
    }
    const entries = this.runEntries;
    const keyStart = i === 0 ? 0 : entries[at - RUN_FIELDS + 1]! + entries[at - RUN_FIELDS + 2]!;
    const keyLen = this.keyLen;
    if (keyStart + keyLen > this.runKeys.length) {
      const grown = new Uint8Array(Math.max(512, 2 * this.runKeys.length, keyStart + keyLen));
      grown.set(this.runKeys.subarray(0, keyStart));
      this.runKeys = grown;
    }
    const keys = this.runKeys;
    const keyBuf = this.keyBuf;
    for (let k = 0; k < keyLen; k++) keys[keyStart + k] = keyBuf[k]!;
    entries[at] = this.current;
    entries[at + 1] = keyStart;
    entries[at + 2] = keyLen;
    entries[at + 3] = this.valueStart;
    entries[at + 4] = this.valueEnd;
  }

  /** Positions at entry `i` of the run cache (same restart run: restartIndex stays). */
  private restoreRunEntry(i: number): void {
    const entries = this.runEntries;
    const at = i * RUN_FIELDS;
    const keyStart = entries[at + 1]!;
    const keyLen = entries[at + 2]!;
    if (keyLen > this.keyBuf.length) this.keyBuf = new Uint8Array(Math.max(keyLen, 2 * this.keyBuf.length));
    const keys = this.runKeys;
    const keyBuf = this.keyBuf;
    for (let k = 0; k < keyLen; k++) keyBuf[k] = keys[keyStart + k]!;
    this.keyLen = keyLen;
    this.current = entries[at]!;
    this.valueStart = entries[at + 3]!;
    this.valueEnd = this.nextOffset = entries[at + 4]!;
    this.runPos = i;
  }

  private invalidate(): void {
    this.runPos = -1;
    this.current = this.restartOffset;
    this.restartIndex = this.block.numRestarts;
    this.keyLen = 0;
    this.valueStart = this.valueEnd = 0;
  }

  private seekToRestartPoint(index: number): void {
    this.keyLen = 0;
    this.restartIndex = index;
    this.nextOffset = this.block.restartPoint(index);
  }

  /** Decodes the entry at `nextOffset` into the current position; false at the end. */
  private parseNext(): boolean {
    const p = this.nextOffset;
    if (p >= this.restartOffset) {
      this.invalidate();
      return false;
    }
    const keyStart = this.decodeHeader(p);
    if (this.hShared > this.keyLen) this.fail(`entry shares ${this.hShared} bytes of a ${this.keyLen}-byte key`, p);
    this.takeEntry(p, keyStart);
    this.settleRestartIndex();
    return true;
  }

  /**
   * Makes the entry at `p`, whose header decodeHeader just read (its key delta at `keyStart`), the
   * current one: its key delta goes into keyBuf after the `hShared` bytes kept there.
   */
  private takeEntry(p: number, keyStart: number): void {
    const shared = this.hShared;
    const nonShared = this.hNonShared;
    const keyLen = shared + nonShared;
    if (keyLen > this.keyBuf.length) {
      const grown = new Uint8Array(Math.max(keyLen, 2 * this.keyBuf.length));
      grown.set(this.keyBuf.subarray(0, shared));
      this.keyBuf = grown;
    }
    const data = this.data;
    const keyBuf = this.keyBuf;
    if (nonShared <= 48) {
      for (let i = 0; i < nonShared; i++) keyBuf[shared + i] = data[keyStart + i]!;
    } else {
      keyBuf.set(data.subarray(keyStart, keyStart + nonShared), shared);
    }
    this.keyLen = keyLen;
    this.current = p;
    this.valueStart = keyStart + nonShared;
    this.valueEnd = this.valueStart + this.hValueLen;
    this.nextOffset = this.valueEnd;
  }

  /** Moves `restartIndex` on to the restart region that holds the current entry. */
  private settleRestartIndex(): void {
    const block = this.block;
    const p = this.current;
    while (this.restartIndex + 1 < block.numRestarts && block.restartPoint(this.restartIndex + 1) <= p) {
      this.restartIndex++;
    }
  }

  /**
   * Decodes the three varints of the entry at `p` into hShared / hNonShared / hValueLen, checks
   * that key delta and value end before the restart array, and returns the key delta's offset.
   */
  private decodeHeader(p: number): number {
    const data = this.data;
    const limit = this.restartOffset;
    if (limit - p >= 3) {
      const a = data[p]!;
      const b = data[p + 1]!;
      const c = data[p + 2]!;
      if ((a | b | c) < 0x80) {
        this.hShared = a;
        this.hNonShared = b;
        this.hValueLen = c;
        if (b + c > limit - p - 3) this.fail('entry runs past the end of the block', p);
        return p + 3;
      }
    }
    let q = p;
    for (let field = 0; field < 3; field++) {
      let result = 0;
      let shift = 0;
      for (;;) {
        if (q >= limit) this.fail('truncated entry header', p);
        const byte = data[q++]!;
        if (shift === 28 && byte > 0x0f) this.fail('bad varint in entry header', p);
        result |= (byte & 0x7f) << shift;
        if (byte < 0x80) break;
        shift += 7;
      }
      result >>>= 0;
      if (field === 0) this.hShared = result;
      else if (field === 1) this.hNonShared = result;
      else this.hValueLen = result;
    }
    if (this.hNonShared + this.hValueLen > limit - q) this.fail('entry runs past the end of the block', p);
    return q;
  }

  private fail(message: string, at: number): never {
    this.invalidate();
    const block = this.block;
    throw corruption(`bad block entry: ${message} (at byte ${at} of the block)`, {
      file: block.file,
      offset: block.offset ?? at,
    });
  }
}
