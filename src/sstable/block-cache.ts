/**
 * BlockCache: an LRU of uncompressed, checksum-verified data blocks, bounded by bytes (LevelDB's
 * block cache, 8 MiB by default). Keyed by (cache id, block offset): a cache id names one table
 * file for as long as the file lives (`newId()` hands out fresh ones; the table cache keeps one per
 * file number, so a table closed and reopened finds its blocks still here — a table file never
 * changes). When a file is deleted its blocks go with `eraseTable(id)`.
 *
 * Costs: `lookup` and `insert` are O(1): a Map per cache id (offset → entry; numbers, no string
 * keys) and an intrusive doubly linked list in recency order. A block is charged its contents'
 * byte length. `insert` of a block larger than the whole capacity does not cache it (capacity 0
 * caches nothing: the "cold" setting).
 *
 * Pinning: blocks are immutable, and an iterator keeps using a block it holds after the cache
 * evicts it: it pins the block, and the block's bytes go back to the byte arena only when the
 * cache has dropped it and no pin is left (Block.drop / unpin). Single-threaded (main thread).
 */
import { invalidArgument } from '../errors.js';
import type { Block } from './block.js';

/** What the head sentinel and a spare entry hold: no block (never read). */
const NO_BLOCK = undefined as unknown as Block;

/** LevelDB's default block cache capacity. */
export const DEFAULT_BLOCK_CACHE_CAPACITY = 8 * 1024 * 1024;

/** A cached block and its place in the recency list. Reused: the last entry removed serves the next insert. */
class Entry {
  prev: Entry = this;
  next: Entry = this;
  constructor(
    public id: number,
    public offset: number,
    public block: Block,
    public charge: number,
  ) {}
}

export class BlockCache {
  private capacityBytes: number;
  private usageBytes = 0;
  private count = 0;
  private readonly tables = new Map<number, Map<number, Entry>>();
  /** Sentinel of the recency list: `head.next` is the least recently used entry. */
  private readonly head: Entry;
  /** The last entry removed (unlinked, holding no block), for the next insert to reuse. */
  private spare: Entry | null = null;
  private lastId = 0;
  /** `lookup` calls that found the block. */
  hits = 0;
  /** `lookup` calls that did not. */
  misses = 0;
  /** Blocks dropped to make room. */
  evictions = 0;

  /** @param capacity bytes of block contents to keep (an integer >= 0). @defaultValue 8 MiB */
  constructor(capacity: number = DEFAULT_BLOCK_CACHE_CAPACITY) {
    this.capacityBytes = checkCapacity(capacity);
    this.head = new Entry(-1, -1, NO_BLOCK, 0);
  }

  get capacity(): number {
    return this.capacityBytes;
  }

  /** Bytes charged for the blocks held now (≤ capacity). */
  get usage(): number {
    return this.usageBytes;
  }

  /** Blocks held now. */
  get size(): number {
    return this.count;
  }

  /** A cache id no other caller has been given by this cache (positive integers). */
  newId(): number {
    return ++this.lastId;
  }

  /** The block at (`id`, `offset`), marked most recently used; counts a hit or a miss. */
  lookup(id: number, offset: number): Block | undefined {
    const entry = this.tables.get(id)?.get(offset);
    if (entry === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    const head = this.head;
    if (entry.next !== head) {
      unlink(entry);
      linkBefore(head, entry);
    }
    return entry.block;
  }

  /**
   * Caches `block` at (`id`, `offset`) as most recently used, charged `charge` bytes (default:
   * its contents' length), evicting least recently used blocks until it fits. Replaces an entry
   * already there. A block charged more than the capacity is not cached: false then.
   */
  insert(id: number, offset: number, block: Block, charge: number = block.data.byteLength): boolean {
    const existing = this.tables.get(id);
    const old = existing?.get(offset);
    // The same block again is only moved: dropping it would recycle the bytes it still uses.
    if (old !== undefined) this.remove(old, existing!, old.block !== block);
    if (charge > this.capacityBytes) return false;
    this.evictFor(charge);
    // Looked up again: removing and evicting may have dropped the id's map.
    let table = this.tables.get(id);
    if (table === undefined) {
      table = new Map();
      this.tables.set(id, table);
    }
    // The entry the eviction just removed, if any: a block read that misses evicts one block and
    // inserts one, and a new object per read lived in the cache long enough to be promoted, then
    // died in the old generation.
    let entry = this.spare;
    if (entry !== null) {
      this.spare = null;
      entry.id = id;
      entry.offset = offset;
      entry.block = block;
      entry.charge = charge;
    } else {
      entry = new Entry(id, offset, block, charge);
    }
    table.set(offset, entry);
    linkBefore(this.head, entry);
    this.usageBytes += charge;
    this.count++;
    return true;
  }

  /** Drops every block of cache id `id` (its file was deleted, or will never be read again). */
  eraseTable(id: number): void {
    const table = this.tables.get(id);
    if (table === undefined) return;
    for (const entry of table.values()) {
      unlink(entry);
      this.usageBytes -= entry.charge;
      this.count--;
      entry.block.drop();
    }
    this.tables.delete(id);
  }

  /** Drops every block (hit and miss counters stay). */
  clear(): void {
    for (let entry = this.head.next; entry !== this.head; entry = entry.next) entry.block.drop();
    this.tables.clear();
    this.head.next = this.head.prev = this.head;
    this.usageBytes = 0;
    this.count = 0;
  }

  /** Changes the capacity, evicting least recently used blocks if the usage is now above it. */
  setCapacity(capacity: number): void {
    this.capacityBytes = checkCapacity(capacity);
    this.evictFor(0);
  }

  /** Sets hits, misses and evictions to zero. */
  resetCounters(): void {
    this.hits = this.misses = this.evictions = 0;
  }

  private evictFor(charge: number): void {
    const head = this.head;
    while (this.usageBytes + charge > this.capacityBytes && head.next !== head) {
      const victim = head.next;
      this.remove(victim, this.tables.get(victim.id)!);
      this.evictions++;
    }
  }

  /** Unlinks `entry`; the block is dropped (Block.drop: its bytes recycled once unpinned) if `drop`. */
  private remove(entry: Entry, table: Map<number, Entry>, drop = true): void {
    unlink(entry);
    table.delete(entry.offset);
    if (table.size === 0) this.tables.delete(entry.id);
    this.usageBytes -= entry.charge;
    this.count--;
    const block = entry.block;
    entry.block = NO_BLOCK;
    this.spare = entry;
    if (drop) block.drop();
  }
}

function checkCapacity(capacity: number): number {
  if (!Number.isSafeInteger(capacity) || capacity < 0) {
    throw invalidArgument(`block cache capacity must be an integer >= 0, got ${String(capacity)}`);
  }
  return capacity;
}

function unlink(entry: Entry): void {
  entry.prev.next = entry.next;
  entry.next.prev = entry.prev;
  entry.prev = entry.next = entry;
}

/** Links `entry` just before `head`, i.e. as the most recently used. */
function linkBefore(head: Entry, entry: Entry): void {
  entry.prev = head.prev;
  entry.next = head;
  head.prev.next = entry;
  head.prev = entry;
}
