/**
 * BlockCache: an LRU of uncompressed, checksum-verified data blocks, bounded by bytes (LevelDB's
 * block cache, 8 MiB by default). Keyed by (cache id, block offset): a cache id names one table
 * file for as long as the file lives (`newId()` hands out fresh ones; the table cache keeps one per
 * file number, so a table closed and reopened finds its blocks still here — a table file never
 * changes). When a file is deleted its blocks go with `eraseTable(id)`.
 *
 * Costs: `lookup` and `insert` are O(1) and allocate nothing once the cache has grown: entries
 * live in typed arrays (key, charge, recency links) found through an open-addressing hash of
 * (id, offset), and their blocks in one array. A Map per table id, as before, cost half a
 * microsecond per miss in inserts and deletes, and its backing stores, rebuilt as entries came
 * and went, outlived V8's young collections. `eraseTable` walks every entry (files are deleted
 * far more rarely than blocks are read). A block is charged its contents' size. `insert` of a
 * block larger than the whole capacity does not cache it (capacity 0 caches nothing: the "cold"
 * setting).
 *
 * Admission (`admit`): while the cache has room it takes every block; once full, a block a read
 * (a point lookup's or an iterator's) missed goes in only if a read missed it recently too
 * (TinyLFU's doorkeeper: a bitset of the blocks missed in the last `window` admission checks,
 * cleared when the window is used up). A block read once is used and let go (a lookup's from its
 * scratch, an iterator's back to the block pool) and evicts nothing: under uniform random
 * gets over a database ten times the cache, most blocks are never asked for again while they
 * would sit in the cache, and copying each into cold memory and evicting another cost more than
 * the hits it bought. Blocks asked for again within the window — a hot set, a run of nearby keys
 * — go in at their second read.
 *
 * Pinning: blocks are immutable, and an iterator keeps using a block it holds after the cache
 * evicts it: it pins the block, and the block goes back to the block pool only when the cache
 * has dropped it and no pin is left (Block.drop / unpin). Single-threaded (main thread).
 */
import { invalidArgument } from '../errors.js';
import type { Block } from './block.js';

/** LevelDB's default block cache capacity. */
export const DEFAULT_BLOCK_CACHE_CAPACITY = 8 * 1024 * 1024;

/** Hash table cells: an entry's slot, or one of these. */
const EMPTY = -1;
const DELETED = -2;
/** Slot 0 is the recency list's sentinel: `next[0]` is the least recently used entry. */
const HEAD = 0;
const INITIAL_SLOTS = 64;
/** The doorkeeper's window: misses of at least this many blocks, two cache-fulls of blocks this size. */
const DOOR_MIN_WINDOW = 256;
const DOOR_BLOCK_BYTES = 4096;
const DOOR_BITS_PER_MISS = 16;

export class BlockCache {
  private capacityBytes: number;
  private usageBytes = 0;
  private count = 0;
  // Entries by slot (1..): table id, block offset, charge, recency links; free slots are chained
  // through `next` from `free` (0: none).
  private ids = new Float64Array(INITIAL_SLOTS);
  private offsets = new Float64Array(INITIAL_SLOTS);
  private charges = new Float64Array(INITIAL_SLOTS);
  private prev = new Int32Array(INITIAL_SLOTS);
  private next = new Int32Array(INITIAL_SLOTS);
  /** The cell each entry is in. */
  private cellOf = new Int32Array(INITIAL_SLOTS);
  private blocks: (Block | undefined)[] = new Array<Block | undefined>(INITIAL_SLOTS).fill(undefined);
  private free = 0;
  private slotsUsed = 1;
  /** Open addressing, linear probing; a power of two at least twice the cells in use. */
  private cells = new Int32Array(2 * INITIAL_SLOTS).fill(EMPTY);
  /** Cells holding an entry or DELETED. */
  private cellsUsed = 0;
  private lastId = 0;
  /** `lookup` calls that found the block. */
  hits = 0;
  /** `lookup` calls that did not. */
  misses = 0;
  /** Blocks dropped to make room. */
  evictions = 0;
  /** `admit` calls that said no: blocks read once recently, left out of the full cache. */
  declined = 0;
  // The doorkeeper: one bit per hashed (id, offset) missed since it was last cleared.
  private door = new Int32Array(0);
  private doorAdded = 0;
  private doorWindow = 0;
  /** The charge of the block inserted last: `admit` takes the next for one of its size. */
  private lastCharge = 0;

  /** @param capacity bytes of block contents to keep (an integer >= 0). @defaultValue 8 MiB */
  constructor(capacity: number = DEFAULT_BLOCK_CACHE_CAPACITY) {
    this.capacityBytes = checkCapacity(capacity);
    this.sizeDoorkeeper();
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
    const cell = this.find(id, offset);
    if (cell < 0) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    const slot = this.cells[cell]!;
    if (this.next[slot] !== HEAD) {
      this.unlink(slot);
      this.linkNewest(slot);
    }
    return this.blocks[slot];
  }

  /**
   * Caches `block` at (`id`, `offset`) as most recently used, charged `charge` bytes (default:
   * its contents' size), evicting least recently used blocks until it fits. Replaces an entry
   * already there. A block charged more than the capacity is not cached: false then.
   */
  insert(id: number, offset: number, block: Block, charge: number = block.size): boolean {
    const old = this.find(id, offset);
    // The same block again is only moved: dropping it would recycle the bytes it still uses.
    if (old >= 0) {
      const slot = this.cells[old]!;
      this.remove(slot, this.blocks[slot] !== block);
    }
    if (charge > this.capacityBytes) return false;
    this.lastCharge = charge;
    this.evictFor(charge);
    const slot = this.takeSlot();
    this.ids[slot] = id;
    this.offsets[slot] = offset;
    this.charges[slot] = charge;
    this.blocks[slot] = block;
    this.addCell(slot); // before it is linked: a rebuild of the cells enters the linked entries
    this.linkNewest(slot);
    this.usageBytes += charge;
    this.count++;
    return true;
  }

  /**
   * Whether a read that missed (`id`, `offset`) should insert the block it reads: yes while the
   * cache has room (for one more block of the size inserted last), else only if another miss for
   * the same block came within the doorkeeper's window (see the class comment). A "no" remembers
   * the block, so its next miss within the window says yes. A cache of capacity 0 takes nothing.
   */
  admit(id: number, offset: number): boolean {
    if (this.capacityBytes === 0) {
      this.declined++;
      return false;
    }
    if (this.usageBytes + this.lastCharge <= this.capacityBytes) return true;
    const h = hashOf(id, offset);
    const door = this.door;
    const word = (h >>> 5) & (door.length - 1);
    const bit = 1 << (h & 31);
    if ((door[word]! & bit) !== 0) return true;
    if (++this.doorAdded > this.doorWindow) {
      door.fill(0);
      this.doorAdded = 1;
    }
    door[word] = door[word]! | bit;
    this.declined++;
    return false;
  }

  /** Drops every block of cache id `id` (its file was deleted, or will never be read again). */
  eraseTable(id: number): void {
    const next = this.next;
    for (let slot = next[HEAD]!; slot !== HEAD; ) {
      const after = next[slot]!;
      if (this.ids[slot] === id) this.remove(slot, true);
      slot = after;
    }
  }

  /** Drops every block (hit and miss counters stay). */
  clear(): void {
    const next = this.next;
    for (let slot = next[HEAD]!; slot !== HEAD; ) {
      const after = next[slot]!;
      this.remove(slot, true);
      slot = after;
    }
  }

  /** Changes the capacity, evicting least recently used blocks if the usage is now above it. */
  setCapacity(capacity: number): void {
    this.capacityBytes = checkCapacity(capacity);
    this.evictFor(0);
    this.sizeDoorkeeper();
  }

  /** Sets hits, misses, evictions and declined admissions to zero. */
  resetCounters(): void {
    this.hits = this.misses = this.evictions = this.declined = 0;
  }

  /**
   * The doorkeeper remembers the misses of the last two cache-fulls of 4 KiB blocks (at least
   * 256), in 16 bits each, so that at most 1 in 16 of its bits is set and a block never missed
   * before is taken for a repeat about 6% of the time at the window's end, 3% on average.
   */
  private sizeDoorkeeper(): void {
    this.doorWindow = Math.max(DOOR_MIN_WINDOW, 2 * Math.ceil(this.capacityBytes / DOOR_BLOCK_BYTES));
    let words = 1;
    while (words * 32 < DOOR_BITS_PER_MISS * this.doorWindow) words *= 2;
    this.door = new Int32Array(words);
    this.doorAdded = 0;
  }

  private evictFor(charge: number): void {
    while (this.usageBytes + charge > this.capacityBytes && this.next[HEAD] !== HEAD) {
      const victim = this.next[HEAD]!;
      this.remove(victim, true);
      this.evictions++;
    }
  }

  /** The cell of the entry (`id`, `offset`), or -1. */
  private find(id: number, offset: number): number {
    const cells = this.cells;
    const mask = cells.length - 1;
    for (let cell = hashOf(id, offset) & mask; ; cell = (cell + 1) & mask) {
      const slot = cells[cell]!;
      if (slot === EMPTY) return -1;
      if (slot >= 0 && this.offsets[slot] === offset && this.ids[slot] === id) return cell;
    }
  }

  /** Enters `slot` (not in the table) into the first free cell of its probe sequence. */
  private addCell(slot: number): void {
    if (2 * (this.cellsUsed + 1) > this.cells.length) this.rebuildCells();
    const cells = this.cells;
    const mask = cells.length - 1;
    let cell = hashOf(this.ids[slot]!, this.offsets[slot]!) & mask;
    while (cells[cell]! >= 0) cell = (cell + 1) & mask;
    if (cells[cell] === EMPTY) this.cellsUsed++;
    cells[cell] = slot;
    this.cellOf[slot] = cell;
  }

  /**
   * Re-enters every entry into cells free of DELETED marks: in place if the entries fill at most
   * a quarter of them, else into twice as many.
   */
  private rebuildCells(): void {
    if (4 * (this.count + 1) > this.cells.length) this.cells = new Int32Array(2 * this.cells.length);
    const cells = this.cells.fill(EMPTY);
    const mask = cells.length - 1;
    this.cellsUsed = 0;
    for (let slot = this.next[HEAD]!; slot !== HEAD; slot = this.next[slot]!) {
      let cell = hashOf(this.ids[slot]!, this.offsets[slot]!) & mask;
      while (cells[cell] !== EMPTY) cell = (cell + 1) & mask;
      cells[cell] = slot;
      this.cellOf[slot] = cell;
      this.cellsUsed++;
    }
  }

  /** Unlinks the entry in `slot` and frees it and its cell; the block is dropped if `drop`. */
  private remove(slot: number, drop: boolean): void {
    this.unlink(slot);
    this.cells[this.cellOf[slot]!] = DELETED;
    this.usageBytes -= this.charges[slot]!;
    this.count--;
    const block = this.blocks[slot]!;
    this.blocks[slot] = undefined;
    this.next[slot] = this.free;
    this.free = slot;
    if (drop) block.drop();
  }

  /** A free entry slot, growing the entry arrays when none is left. */
  private takeSlot(): number {
    const slot = this.free;
    if (slot !== 0) {
      this.free = this.next[slot]!;
      return slot;
    }
    if (this.slotsUsed === this.ids.length) this.growSlots();
    return this.slotsUsed++;
  }

  private growSlots(): void {
    const n = 2 * this.ids.length;
    this.ids = grown(new Float64Array(n), this.ids);
    this.offsets = grown(new Float64Array(n), this.offsets);
    this.charges = grown(new Float64Array(n), this.charges);
    this.prev = grown(new Int32Array(n), this.prev);
    this.next = grown(new Int32Array(n), this.next);
    this.cellOf = grown(new Int32Array(n), this.cellOf);
    for (let i = this.blocks.length; i < n; i++) this.blocks.push(undefined);
  }

  private unlink(slot: number): void {
    const prev = this.prev[slot]!;
    const next = this.next[slot]!;
    this.next[prev] = next;
    this.prev[next] = prev;
  }

  /** Links `slot` as the most recently used entry (just before the sentinel). */
  private linkNewest(slot: number): void {
    const last = this.prev[HEAD]!;
    this.prev[slot] = last;
    this.next[slot] = HEAD;
    this.next[last] = slot;
    this.prev[HEAD] = slot;
  }
}

/** `to` with `from` copied into its start. */
function grown<T extends Float64Array | Int32Array>(to: T, from: T): T {
  to.set(from);
  return to;
}

/** A 32-bit hash of a cache key: the id and both halves of the offset, mixed (murmur3's finalizer). */
function hashOf(id: number, offset: number): number {
  let h = Math.imul(id, 0x9e3779b1) ^ (offset >>> 0) ^ Math.imul((offset / 4294967296) >>> 0, 0x85ebca6b);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

function checkCapacity(capacity: number): number {
  if (!Number.isSafeInteger(capacity) || capacity < 0) {
    throw invalidArgument(`block cache capacity must be an integer >= 0, got ${String(capacity)}`);
  }
  return capacity;
}
