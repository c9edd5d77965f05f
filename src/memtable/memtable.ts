/**
 * MemTable: the newest writes, in memory, ordered by internal key (user key ascending, sequence
 * descending) in a skiplist. Owned by the database's JavaScript thread; becomes immutable (no
 * more `add`) when it is full and is then flushed to a level-0 table.
 *
 * Bytes: keys and values are copied into the skiplist's arena on `add`, so the caller may reuse
 * its buffers and the memtable makes no object per entry (see skiplist.ts for the layout).
 * Everything the memtable returns (values, iterator keys) is owned by it and stays valid until it
 * is retired (`retire`) and its last pinned reader is gone: then its arena is recycled for
 * another memtable. Until then it never mutates what it has stored.
 *
 * Misses: a small Bloom filter over the user keys (LevelDB's hash, as RocksDB's memtable bloom)
 * answers most lookups of absent keys without walking the skiplist; memtable-filter.ts keeps it,
 * and defers it for a memtable made over stored entries.
 */
import { levelDBHash, levelDBHashRange } from '../filter/leveldb-hash.js';
import type { BatchEntries } from '../wal/write-batch.js';
import { RUN_FIELDS, type EntryRun } from './entry-run.js';
import type { ArenaPool } from './arena-pool.js';
import { SkipList, type SkipListState, type SkipListView } from './skiplist.js';
import { bloomAdd, bloomMayContain, filterBits, MEMTABLE_BLOOM_SEED, MemTableFilter } from './memtable-filter.js';

export { MEMTABLE_BLOOM_SEED } from './memtable-filter.js';

/** Persisted in every internal key and WAL record: never renumber. */
export const ValueType = { DELETION: 0, VALUE: 1 } as const;
export type ValueType = (typeof ValueType)[keyof typeof ValueType];

/** Result of `MemTable.get`. */
export const Lookup = {
  /** The memtable holds nothing for the key at that sequence: look further down. */
  NOT_FOUND: 0,
  /** The newest visible entry is a value: `memtable.foundValue`. */
  FOUND: 1,
  /** The newest visible entry is a deletion: the key is absent, look no further. */
  DELETED: 2,
} as const;
export type Lookup = (typeof Lookup)[keyof typeof Lookup];

const EMPTY = new Uint8Array(0);
/** Batches at least this long are inserted in key order, each insert starting from the last. */
const SORT_FROM = 8;

export interface MemTableOptions {
  /**
   * Bits of the in-memory Bloom filter over user keys, rounded up to a power of two; 0 disables
   * it. Sized by the caller from the write buffer size (≈ 10 bits per expected entry).
   * @defaultValue 0
   */
  bloomBits?: number;
  /** Initial arena size; it doubles as needed. Size it near the write buffer to avoid copies. */
  initialArenaBytes?: number;
  /**
   * Where the arena comes from and, once the memtable is retired, goes back to; its buffers are
   * `pool.arenaBytes` long (initialArenaBytes is then ignored). @defaultValue none: a new buffer
   */
  pool?: ArenaPool;
  /**
   * Storage to start from (a memtable image, db/memtable-image.ts), and the highest sequence in
   * it: the memtable takes the buffer, and its Bloom filter (if any) gets every key in it.
   * @defaultValue none: empty
   */
  state?: { list: SkipListState; maxSequence: number };
  /**
   * With `state` and `bloomBits`, and no `bloom` taken: the Bloom filter is filled from the list
   * only once reads show they need it, a slice per search (memtable-filter.ts), not when the
   * memtable is made. For the memtables an open finds in an image, which it flushes at once or
   * keeps taking writes: an open that nothing reads during that time pays nothing for their
   * filters. @defaultValue false
   */
  deferBloom?: boolean;
  /**
   * With `state` and `bloomBits`: the filter saved with it (a memtable image's, `completeFilter`
   * when the image was written). Taken as the memtable's own if it has the size `bloomBits` gives
   * (rounded up to a power of two: filterBits), so no fill and nothing deferred; ignored otherwise
   * (the option changed since). @defaultValue none
   */
  bloom?: Uint32Array;
}

export class MemTable {
  readonly #list: SkipList;
  /** The Bloom filter over user keys, and its deferral (memtable-filter.ts). */
  readonly #filter: MemTableFilter;
  /** The value found by the last `get` that returned FOUND. Owned by the memtable. */
  foundValue: Uint8Array = EMPTY;

  readonly #pool: ArenaPool | null;
  /** Readers that may outlive a call (iterators): the arena is not recycled while any remains. */
  #pins = 0;
  /** Retired (flushed and dropped) while pinned: the last unpin recycles the arena. */
  #retired = false;
  #maxSequence = 0;

  constructor(options: MemTableOptions = {}) {
    this.#pool = options.pool ?? null;
    const state = options.state;
    this.#list = state !== undefined ? SkipList.fromState(state.list) : new SkipList(options.initialArenaBytes, this.#pool?.takeZeroed());
    this.#maxSequence = state?.maxSequence ?? 0;
    const filter = (this.#filter = new MemTableFilter(filterBits(options.bloomBits ?? 0)));
    if (state === undefined) return;
    if (options.bloom !== undefined && filter.adopt(options.bloom)) return;
    if (options.deferBloom === true) filter.defer();
    else filter.addAll(this.#list);
  }

  /**
   * The Bloom filter when it holds every key (neither deferred nor being filled), else null: for
   * a memtable image, which saves it beside the storage. Borrowed: valid until the memtable is
   * recycled.
   */
  get completeFilter(): Uint32Array | null {
    return this.#filter.ready;
  }

  /** True while the Bloom filter is deferred (or being filled): gets search the list without it. */
  get bloomDeferred(): boolean {
    return this.#filter.deferred;
  }

  /** Entries added so far. */
  get count(): number {
    return this.#list.count;
  }

  /**
   * Bytes used: nodes (keys, values, headers and towers) and the bloom (not the buffer's unused
   * tail, so a tiny write buffer still holds several entries).
   */
  get approximateMemoryUsage(): number {
    return this.#list.bytesUsed + (this.#filter.bits >>> 3); // a deferred filter counted as filled
  }

  /** The highest sequence number added (0 if none). */
  get maxSequence(): number {
    return this.#maxSequence;
  }

  /** Adds an entry, copying the bytes. `seq` must be new (greater than every sequence added before). */
  add(seq: number, type: ValueType, key: Uint8Array, value: Uint8Array): void {
    this.#list.insert(key, seq, type, type === ValueType.VALUE ? value : EMPTY);
    this.#maxSequence = seq;
    if (this.#filter.sink !== null) this.#bloomAdd(levelDBHash(key, MEMTABLE_BLOOM_SEED));
  }

  /**
   * Adds every entry of a decoded batch (`rep` its encoding), entry i at sequence `seq + i`,
   * copying the bytes. A batch of SORT_FROM entries or more is inserted in internal-key order,
   * each insert's search starting from the one before (skiplist.ts, insertFrom): a batch of
   * random keys then costs about what a sequential one does, instead of a full descent per key.
   */
  addEntries(rep: Uint8Array, entries: BatchEntries, seq: number): void {
    const list = this.#list;
    const f = entries.fields;
    const n = entries.count;
    const order = n >= SORT_FROM ? this.#sortedOrder(rep, entries) : null;
    if (n > 0) this.#maxSequence = seq + n - 1;
    for (let k = 0; k < n; k++) {
      const i = order === null ? k : order[k]!;
      const at = i * 5;
      const type = f[at]!;
      const keyOff = f[at + 1]!;
      const keyLen = f[at + 2]!;
      list.insertFrom(rep, keyOff, keyLen, rep, f[at + 3]!, f[at + 4]!, seq + i, type, order !== null && k > 0);
      if (this.#filter.sink !== null) this.#bloomAdd(levelDBHashRange(rep, keyOff, keyOff + keyLen, MEMTABLE_BLOOM_SEED));
    }
  }

  /**
   * Defers the Bloom filter (see MemTableOptions.deferBloom): it is emptied, and filled again from
   * the list once reads need it. For a memtable about to be flushed (a replay's), whose filter
   * would cost more to keep up than it saves unless it is read meanwhile. No-op without a filter.
   */
  deferBloom(): void {
    this.#filter.defer();
  }

  /**
   * Adds every entry of `run` (copying the bytes) in internal-key order. Into an empty memtable
   * the entries are sorted and loaded in one pass (SkipList.loadSorted, no key compared against
   * the list); otherwise they go in as a run of ascending inserts, each starting from the one
   * before. The run is left as it was.
   */
  addRun(run: EntryRun): void {
    const n = run.count;
    if (n === 0) return;
    const list = this.#list;
    const f = run.fields;
    const bytes = run.bytes;
    const seqs = run.seqs;
    const order = this.#entryOrder(bytes, f, n, seqs);
    this.#maxSequence = Math.max(this.#maxSequence, maxOf(seqs, n));
    if (this.#filter.sink !== null) this.#bloomAddRun(run);
    if (list.count === 0) {
      list.loadSorted(bytes, f, seqs, order, n);
      return;
    }
    for (let k = 0; k < n; k++) {
      const at = order[k]! * RUN_FIELDS;
      list.insertFrom(bytes, f[at + 1]!, f[at + 2]!, bytes, f[at + 3]!, f[at + 4]!, seqs[order[k]!]!, f[at]!, k > 0);
    }
  }

  #bloomAddRun(run: EntryRun): void {
    const f = run.fields;
    const bytes = run.bytes;
    for (let i = 0; i < run.count; i++) {
      const keyOff = f[i * RUN_FIELDS + 1]!;
      this.#bloomAdd(levelDBHashRange(bytes, keyOff, keyOff + f[i * RUN_FIELDS + 2]!, MEMTABLE_BLOOM_SEED));
    }
  }

  /** Scratch of #entryOrder, reused: sort keys (as 64-bit words) and the order they give. */
  #sortKeys = new BigUint64Array(0);
  #sortOrder = new Int32Array(0);

  /**
   * The indexes of `n` entries (RUN_FIELDS ints each in `f`, indexing `bytes`) in internal-key
   * order; entry i's sequence is `seqs[i]`, or (null) grows with i as a batch's do. Sorted
   * natively: each entry becomes one 64-bit unsigned number — the 8 bytes after the prefix every
   * key shares, big-endian (bytes past the key's end count as 0, the least byte, which keeps the
   * order), with the low bits replaced by the entry's index — and BigUint64Array#sort orders
   * those without calling back into JavaScript. Entries whose numbers agree above the index bits
   * (keys alike in those bytes, or one key's versions) are then sorted by a full comparison.
   *
   * Each loop is a function of its own: a replay runs this once per open, mostly before V8 has
   * optimized it, and a function with one loop is compiled (on stack) whole, where a function of
   * several loops fell back to the interpreter at each loop it had not run yet.
   */
  #entryOrder(bytes: Uint8Array, f: Int32Array, n: number, seqs: Float64Array | null): Int32Array {
    if (this.#sortKeys.length < n) {
      const size = Math.max(n, 2 * this.#sortKeys.length);
      this.#sortKeys = new BigUint64Array(size);
      this.#sortOrder = new Int32Array(size);
    }
    const keys = this.#sortKeys.subarray(0, n);
    // Little-endian words: word 2i holds the low half of entry i's number, word 2i + 1 the high.
    const words = new Uint32Array(keys.buffer, keys.byteOffset, 2 * n);
    const indexBits = Math.max(1, 32 - Math.clz32(n - 1));
    const indexMask = indexBits >= 32 ? -1 : (1 << indexBits) - 1;
    const shared = sharedPrefixLength(bytes, f, n);
    fillSortWords(words, bytes, f, n, shared, indexMask);
    keys.sort();
    const order = this.#sortOrder.subarray(0, n);
    for (let k = 0; k < n; k++) order[k] = words[2 * k]! & indexMask;
    sortTies(order, words, bytes, f, n, seqs, shared, indexMask);
    return order;
  }

  /**
   * The batch's entry indexes in internal-key order (user key ascending, then the later entry —
   * the higher sequence — first), or null if the batch is in that order already.
   */
  #sortedOrder(rep: Uint8Array, entries: BatchEntries): Int32Array | null {
    const f = entries.fields;
    const n = entries.count;
    return inKeyOrder(rep, f, n) ? null : this.#entryOrder(rep, f, n, null);
  }

  #bloomAdd(h: number): void {
    const filter = this.#filter;
    bloomAdd(filter.sink!, filter.mask, h);
  }

  /** False only if no entry for a key with this LevelDB hash (seed MEMTABLE_BLOOM_SEED) was added. */
  mayContainHash(h: number): boolean {
    const filter = this.#filter;
    return filter.ready === null || bloomMayContain(filter.ready, filter.mask, h);
  }

  /**
   * The newest entry for `key` with sequence ≤ `seq`. On FOUND the value is in `foundValue`.
   * `hash` (optional): the key's LevelDB hash with MEMTABLE_BLOOM_SEED, if the caller has it.
   */
  get(key: Uint8Array, seq: number, hash?: number): Lookup {
    const filter = this.#filter;
    filter.search(this.#list);
    if (filter.ready !== null && !this.mayContainHash(hash ?? levelDBHash(key, MEMTABLE_BLOOM_SEED))) {
      return Lookup.NOT_FOUND;
    }
    const list = this.#list;
    const node = list.seek(key, seq);
    if (node === 0 || !list.hasKey(node, key)) return Lookup.NOT_FOUND;
    if (list.typeOf(node) === ValueType.DELETION) return Lookup.DELETED;
    this.foundValue = list.valueOf(node);
    return Lookup.FOUND;
  }

  /**
   * False only if no entry of the user key `key[start, end)` was added (the Bloom filter's
   * answer); true without a filter. A seek's question (MemTableInternalIterator.seekIfMayMatch):
   * it counts as a search toward filling a deferred filter, as a `get` does.
   */
  mayContainUserKey(key: Uint8Array, start: number, end: number): boolean {
    const filter = this.#filter;
    filter.search(this.#list);
    return filter.ready === null || this.mayContainHash(levelDBHashRange(key, start, end, MEMTABLE_BLOOM_SEED));
  }

  /** An iterator over every entry (all versions), in internal-key order. */
  iterator(): MemTableIterator {
    return new MemTableIterator(this.#list);
  }

  /**
   * The entries' storage, for a flush on another thread: the arena itself when it is a shared one
   * (a pool's), read in place, else a copy (SkipList.exportState). Only for an immutable memtable,
   * and it must not be retired before the other thread is done reading.
   */
  exportState(): SkipListState {
    return this.#list.exportState();
  }

  /**
   * Marks a reader that may outlive the current call (an iterator): until it unpins, `retire`
   * leaves the arena alone. Pins are counted.
   */
  pin(): void {
    this.#pins++;
  }

  /** Ends a `pin`. The last one of a retired memtable gives its arena back to the pool. */
  unpin(): void {
    if (this.#pins > 0 && --this.#pins === 0 && this.#retired) this.#recycle();
  }

  /**
   * The database is done with this memtable (flushed, and dropped as `imm`): its arena goes back to
   * the pool now, or when the last pinned reader unpins. Nothing may read it afterwards but those
   * pinned readers; it holds no entries once they are gone.
   */
  retire(): void {
    if (this.#retired) return;
    this.#retired = true;
    if (this.#pins === 0) this.#recycle();
  }

  #recycle(): void {
    const pool = this.#pool;
    if (pool === null) return;
    const { buffer, used } = this.#list.releaseStorage();
    this.#filter.drop();
    pool.give(buffer, used);
  }

  /** The entries' storage in place, for a memtable image (SkipList.storageView): valid until the next add. */
  storageView(): SkipListView {
    return this.#list.storageView();
  }

  /** An iterator over exported storage (see `exportState`). */
  static iteratorOf(state: SkipListState): MemTableIterator {
    return new MemTableIterator(SkipList.fromState(state));
  }
}

/**
 * True if the `n` entries (RUN_FIELDS ints each in `f`) are in internal-key order already, entry
 * i's sequence growing with i (a batch's): keys strictly ascending.
 */
function inKeyOrder(bytes: Uint8Array, f: Int32Array, n: number): boolean {
  for (let i = 1; i < n; i++) {
    const aOff = f[(i - 1) * RUN_FIELDS + 1]!;
    const aLen = f[(i - 1) * RUN_FIELDS + 2]!;
    const bOff = f[i * RUN_FIELDS + 1]!;
    const bLen = f[i * RUN_FIELDS + 2]!;
    const m = aLen < bLen ? aLen : bLen;
    let j = 0;
    while (j < m && bytes[aOff + j] === bytes[bOff + j]) j++;
    // Equal keys: the later entry (higher sequence) sorts first, so the pair is out of order.
    if (j < m ? bytes[aOff + j]! > bytes[bOff + j]! : aLen >= bLen) return false;
  }
  return true;
}

/** The length of the prefix every key of the first `n` entries (RUN_FIELDS ints each) shares. */
function sharedPrefixLength(bytes: Uint8Array, f: Int32Array, n: number): number {
  const firstOff = f[1]!;
  let shared = f[2]!;
  for (let i = 1; i < n && shared > 0; i++) {
    const off = f[i * RUN_FIELDS + 1]!;
    const len = f[i * RUN_FIELDS + 2]!;
    if (len < shared) shared = len;
    let j = 0;
    while (j < shared && bytes[off + j] === bytes[firstOff + j]) j++;
    shared = j;
  }
  return shared;
}

/** Entry i's sort number (see MemTable#entryOrder) into `words[2i]` (low half) and `words[2i + 1]`. */
function fillSortWords(words: Uint32Array, bytes: Uint8Array, f: Int32Array, n: number, shared: number, indexMask: number): void {
  for (let i = 0; i < n; i++) {
    const off = f[i * RUN_FIELDS + 1]! + shared;
    const avail = f[i * RUN_FIELDS + 2]! - shared;
    let high = 0;
    let low = 0;
    if (avail >= 8) {
      high = (bytes[off]! << 24) | (bytes[off + 1]! << 16) | (bytes[off + 2]! << 8) | bytes[off + 3]!;
      low = (bytes[off + 4]! << 24) | (bytes[off + 5]! << 16) | (bytes[off + 6]! << 8) | bytes[off + 7]!;
    } else {
      for (let j = 0; j < 4; j++) high = (high << 8) | (j < avail ? bytes[off + j]! : 0);
      for (let j = 4; j < 8; j++) low = (low << 8) | (j < avail ? bytes[off + j]! : 0);
    }
    words[2 * i] = (low & ~indexMask) | i;
    words[2 * i + 1] = high;
  }
}

/**
 * Sorts each stretch of `order` whose sort numbers tie above the index bits by the whole key
 * (from byte `shared` on), then the newest entry (the higher sequence) first.
 */
function sortTies(
  order: Int32Array,
  words: Uint32Array,
  bytes: Uint8Array,
  f: Int32Array,
  n: number,
  seqs: Float64Array | null,
  shared: number,
  indexMask: number,
): void {
  const compare = (a: number, b: number): number => {
    const aOff = f[a * RUN_FIELDS + 1]!;
    const aLen = f[a * RUN_FIELDS + 2]!;
    const bOff = f[b * RUN_FIELDS + 1]!;
    const bLen = f[b * RUN_FIELDS + 2]!;
    const m = aLen < bLen ? aLen : bLen;
    for (let i = shared; i < m; i++) {
      const c = bytes[aOff + i]! - bytes[bOff + i]!;
      if (c !== 0) return c;
    }
    if (aLen !== bLen) return aLen - bLen;
    return seqs === null ? b - a : seqs[b]! - seqs[a]!;
  };
  const above = ~indexMask;
  for (let k = 0; k < n; ) {
    const high = words[2 * k + 1]!;
    const low = words[2 * k]! & above;
    let end = k + 1;
    while (end < n && words[2 * end + 1] === high && (words[2 * end]! & above) === low) end++;
    if (end - k > 1) order.subarray(k, end).sort(compare);
    k = end;
  }
}

/** The largest of `values[0, n)` (a loop of its own: see #entryOrder). */
function maxOf(values: Float64Array, n: number): number {
  let max = 0;
  for (let i = 0; i < n; i++) if (values[i]! > max) max = values[i]!;
  return max;
}

/**
 * Walks a memtable's entries in internal-key order. `key`, `seq`, `type`, `value` describe the
 * current entry while `valid`; `key` and `value` make views of bytes the memtable owns, which it
 * does not change until it is retired (see the file header: pin it to read past that). `prev`
 * costs a search (O(log n)), as in LevelDB: the skiplist has no back links.
 */
export class MemTableIterator {
  #node = 0;

  constructor(readonly list: SkipList) {}

  get valid(): boolean {
    return this.#node !== 0;
  }
  get key(): Uint8Array {
    return this.list.keyOf(this.#node);
  }
  get seq(): number {
    return this.list.seqOf(this.#node);
  }
  get type(): number {
    return this.list.typeOf(this.#node);
  }
  get value(): Uint8Array {
    return this.list.valueOf(this.#node);
  }

  /**
   * The current entry without views, for a table builder: the internal key (user key ‖ trailer)
   * is `bytes[internalKeyStart, internalKeyEnd)` and the value `bytes[internalKeyEnd, valueEnd)`.
   */
  get bytes(): Uint8Array {
    return this.list.bytes;
  }
  get internalKeyStart(): number {
    return this.list.internalKeyStart(this.#node);
  }
  get internalKeyEnd(): number {
    return this.list.internalKeyEnd(this.#node);
  }
  get valueEnd(): number {
    return this.list.valueEnd(this.#node);
  }

  seekToFirst(): void {
    this.#node = this.list.first();
  }
  seekToLast(): void {
    this.#node = this.list.last();
  }
  /** Positions at the first entry at or after (key, seq) in internal-key order. */
  seek(key: Uint8Array, seq: number): void {
    this.#node = this.list.seek(key, seq);
  }
  /** Positions at the last entry strictly before (key, seq) in internal-key order. */
  seekBefore(key: Uint8Array, seq: number): void {
    this.#node = this.list.seekBefore(key, seq);
  }
  next(): void {
    this.#node = this.list.next(this.#node);
  }
  prev(): void {
    this.#node = this.list.before(this.#node);
  }
}
