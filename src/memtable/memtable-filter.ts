/**
 * The memtable's Bloom filter over user keys (LevelDB's hash with MEMTABLE_BLOOM_SEED, BLOOM_PROBES
 * probes, a power-of-two number of bits, as RocksDB's memtable bloom), and its deferral.
 *
 * A memtable made over stored entries (a memtable image's, or a replay's about to be flushed)
 * need not pay for a filter nothing may read: its filter can be saved with the image and taken
 * back (`adopt`), or deferred (`defer`) and filled only once reads show they need it. Phases:
 *
 * - ready: `ready` holds every key; gets ask it; adds go to it (`sink`, the same array).
 * - deferred: no filter; gets search the list and are counted (`search`); adds go nowhere, the
 *   fill will take them from the list.
 * - filling: once searches pass BLOOM_AFTER_SEARCHES and a sixteenth of the entries, a new
 *   filter (`sink`) takes every add, and each search adds a slice of the keys the list held when
 *   the fill began (FILL_SLICE nodes in storage order, then 4·FILL_SLICE nodes' links checked:
 *   skiplist.ts, StorageWalk); gets go on searching the list until the last slice is in, and the
 *   filter is ready.
 * - none: no filter at all (`bloomBits` 0, or a recycled memtable).
 *
 * The filter's bits are an image's format too (db/memtable-image.ts saves them): BLOOM_PROBES,
 * MEMTABLE_BLOOM_SEED, the hash and the probe sequence change only with that file's version.
 */
import { levelDBHashRange } from '../filter/leveldb-hash.js';
import type { SkipList, StorageWalk } from './skiplist.js';

/** Persisted (memtable images save the filter): the hash seed, LevelDB's Bloom seed, so a key's hash can be shared. */
export const MEMTABLE_BLOOM_SEED = 0xbc9f1d34;
/** Persisted (memtable images save the filter): probes per key. */
const BLOOM_PROBES = 6;
/**
 * A deferred filter's fill begins once searches without it reach this many, or a sixteenth of
 * the entries if more. Filling a full 4 MiB memtable (36,000 entries) cost 11-15 ms in a fresh
 * process, and a search of its list 2-4 µs (BENCHMARKS.md, session 30): the fill then costs about
 * what the searches before it did, so a reader pays at most about twice the better choice, and a
 * memtable only flushed pays nothing. The fill itself takes count/FILL_SLICE + count/(4·FILL_SLICE)
 * more searches (about 350 for 36,000 entries).
 */
const BLOOM_AFTER_SEARCHES = 64;
/**
 * Nodes whose keys one search adds to a filter being filled (and four times as many whose links
 * it checks once every key is in): one pass inside one get took 20-37 ms on a 4 MiB image in a
 * fresh process, the loop running once, before V8 had compiled it; sliced, the longest get of the
 * fill took 2.6-4.8 ms, the sum about the same (BENCHMARKS.md, session 30).
 */
export const FILL_SLICE = 128;
/** The key ranges of one slice (single-threaded: one fill's slice at a time). */
const fillRanges = new Int32Array(2 * FILL_SLICE);

/** Sets the BLOOM_PROBES bits of hash `h` in `bloom` (`mask`: its bit count − 1, a power of two − 1). */
export function bloomAdd(bloom: Uint32Array, mask: number, h: number): void {
  const delta = (h >>> 17) | (h << 15);
  for (let i = 0; i < BLOOM_PROBES; i++) {
    const bit = h & mask;
    bloom[bit >>> 5]! |= 1 << (bit & 31);
    h = (h + delta) | 0;
  }
}

/** False only if no key whose hash is `h` was added to `bloom` (see bloomAdd). */
export function bloomMayContain(bloom: Uint32Array, mask: number, h: number): boolean {
  const delta = (h >>> 17) | (h << 15);
  for (let i = 0; i < BLOOM_PROBES; i++) {
    const bit = h & mask;
    if ((bloom[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
    h = (h + delta) | 0;
  }
  return true;
}

/** Adds the keys `bytes[ranges[2i], ranges[2i + 1])`, i < n, to `bloom` (see bloomAdd). */
function bloomAddRanges(bloom: Uint32Array, mask: number, bytes: Uint8Array, ranges: Int32Array, n: number): void {
  for (let i = 0; i < n; i++) bloomAdd(bloom, mask, levelDBHashRange(bytes, ranges[2 * i]!, ranges[2 * i + 1]!, MEMTABLE_BLOOM_SEED));
}

/** Adds every key of `list` to `bloom`, along the links (in key order: a cache miss per node). */
function addLinkedKeys(bloom: Uint32Array, mask: number, list: SkipList): void {
  const bytes = list.bytes;
  for (let node = list.first(); node !== 0; node = list.next(node)) {
    bloomAdd(bloom, mask, levelDBHashRange(bytes, list.internalKeyStart(node), list.internalKeyEnd(node) - 8, MEMTABLE_BLOOM_SEED));
  }
}

/** `bits` rounded up to a power of two of at least 64 (a probe's bit is then a mask of the hash), or 0. */
export function filterBits(bits: number): number {
  return bits > 0 ? 2 ** Math.ceil(Math.log2(Math.max(64, bits))) : 0;
}

export class MemTableFilter {
  /** The filter gets ask, holding every key; null unless ready. */
  ready: Uint32Array | null = null;
  /** Where adds put their keys' hashes: `ready`, the filter being filled, or null. */
  sink: Uint32Array | null = null;
  /** Bit count − 1 (bits a power of two), or −1 without a filter. */
  readonly mask: number;
  /** Searches without the filter while deferred; −1: not deferred. */
  #bareSearches = -1;
  /** The fill under way: its walk of the list's storage; null otherwise. */
  #walk: StorageWalk | null = null;

  /** A ready, empty filter of `bits` (see filterBits), or none if 0. */
  constructor(bits: number) {
    this.mask = bits - 1;
    if (bits > 0) this.ready = this.sink = new Uint32Array(bits >>> 5);
  }

  /** Bits of the filter (0: none). */
  get bits(): number {
    return this.mask + 1;
  }

  /** True while deferred or being filled: gets search the list without asking a filter. */
  get deferred(): boolean {
    return this.#bareSearches >= 0;
  }

  /** Adds every key of `list` at once (a memtable made over stored entries, its filter not deferred). */
  addAll(list: SkipList): void {
    const bloom = this.sink;
    if (bloom === null) return;
    const ranges = list.userKeyRangesInStorage();
    if (ranges !== null) bloomAddRanges(bloom, this.mask, list.bytes, ranges, list.count);
    else addLinkedKeys(bloom, this.mask, list);
  }

  /** Takes `saved` (a memtable image's filter of the same entries) as the filter if it has this one's size. */
  adopt(saved: Uint32Array): boolean {
    if (this.mask < 0 || saved.length !== this.bits >>> 5) return false;
    this.#finish(saved);
    return true;
  }

  /** Defers the filter: emptied, to be filled from the list once reads need it. No-op without one. */
  defer(): void {
    if (this.mask < 0) return;
    this.ready = this.sink = null;
    this.#walk = null;
    this.#bareSearches = 0;
  }

  /** Drops the filter for good (the memtable is recycled). */
  drop(): void {
    this.ready = this.sink = null;
    this.#walk = null;
    this.#bareSearches = -1;
  }

  /** Counts a search of `list` made without the filter; begins or goes on filling it once reads show it pays. */
  search(list: SkipList): void {
    if (this.#bareSearches < 0) return;
    if (this.#walk !== null) this.#fillSlice(list);
    else if (++this.#bareSearches > BLOOM_AFTER_SEARCHES && this.#bareSearches > list.count >>> 4) {
      this.sink = new Uint32Array(this.bits >>> 5);
      this.#walk = list.storageWalk();
      this.#fillSlice(list);
    }
  }

  /**
   * One slice of the fill. The keys a slice hashes before the walk has tiled the whole storage
   * may turn out not to be the list's: a walk that fails drops that filter, and the keys go in
   * along the links instead, all at once.
   */
  #fillSlice(list: SkipList): void {
    const walk = this.#walk!;
    if (!walk.linking) {
      const n = list.walkStorage(walk, fillRanges, FILL_SLICE);
      if (n < 0) return this.#fillAlongLinks(list);
      bloomAddRanges(this.sink!, this.mask, list.bytes, fillRanges, n);
    } else if (!list.checkStorageLinks(walk, 4 * FILL_SLICE)) {
      return this.#fillAlongLinks(list);
    }
    if (walk.done) this.#finish(this.sink!);
  }

  #fillAlongLinks(list: SkipList): void {
    const bloom = new Uint32Array(this.bits >>> 5);
    addLinkedKeys(bloom, this.mask, list);
    this.#finish(bloom);
  }

  /** `bloom`, holding every key, is the filter from now on. */
  #finish(bloom: Uint32Array): void {
    this.ready = this.sink = bloom;
    this.#walk = null;
    this.#bareSearches = -1;
  }
}
