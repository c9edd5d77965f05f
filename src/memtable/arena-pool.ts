/**
 * ArenaPool: memtable arenas used again instead of left to the garbage collector.
 *
 * Every memtable switch used to allocate a fresh arena (writeBufferSize and an eighth), and every
 * flush a copy of the full one for the worker. A dead arena is freed only when V8 collects the
 * object that holds it, and the worker's copy only when the worker's heap is collected: V8 lets
 * tens of megabytes of such external memory pile up between collections. bench/db's fillbatch
 * process (1,000,000 db_bench entries in `batchSync`es of 1,000) peaked at 236.9 MB of RSS in the
 * last full run before this pool, 159.0 MB in the first after it (BENCHMARKS.md, issue 10
 * sessions 8 and 9).
 *
 * So a database keeps one pool: a memtable takes its arena from it, a flushed memtable that no
 * iterator still reads gives its arena back (MemTable.retire), and the worker hands back the copy
 * it flushed from (compaction/runner.ts). Only buffers of exactly `arenaBytes` are kept (a
 * memtable that outgrew its arena, or a buffer the worker still holds, is left to the collector),
 * and at most `capacity` of them, so an idle database holds at most that many arenas beyond its
 * memtables. Single-threaded: the database's thread only.
 */

/**
 * Arenas kept idle by default. A region's three at the peak (its memtable, the one being flushed,
 * the worker's copy) come from two recycled and the one the live memtable holds; a database of
 * several regions keeps two per region.
 */
const DEFAULT_CAPACITY = 2;

interface FreeArena {
  readonly buffer: ArrayBuffer;
  /** Bytes from the start that may be non-zero. */
  readonly dirty: number;
}

export class ArenaPool {
  readonly #free: FreeArena[] = [];

  /** Keeps up to `capacity` idle buffers of `arenaBytes` each. */
  constructor(
    readonly arenaBytes: number,
    readonly capacity = DEFAULT_CAPACITY,
  ) {}

  /** Idle buffers held now. */
  get size(): number {
    return this.#free.length;
  }

  /** A buffer of `arenaBytes`, every byte zero (a new skiplist's arena): recycled, or new. */
  takeZeroed(): ArrayBuffer {
    const arena = this.#free.pop();
    if (arena === undefined) return new ArrayBuffer(this.arenaBytes);
    new Uint8Array(arena.buffer, 0, arena.dirty).fill(0);
    return arena.buffer;
  }

  /**
   * A buffer of `arenaBytes` for a copy of `keep` bytes about to be written at its start: every
   * byte from `keep` on is zero (so whoever gives it back says only `keep` bytes may be dirty),
   * those before may hold anything. Recycled, or new.
   */
  take(keep: number): ArrayBuffer {
    const arena = this.#free.pop();
    if (arena === undefined) return new ArrayBuffer(this.arenaBytes);
    if (arena.dirty > keep) new Uint8Array(arena.buffer, keep, arena.dirty - keep).fill(0);
    return arena.buffer;
  }

  /**
   * Takes back a buffer no one reads or writes any more; `dirty`: how many bytes from its start
   * may be non-zero. Buffers of another size (a detached one has none) are not kept, nor any
   * beyond the capacity.
   */
  give(buffer: ArrayBuffer, dirty = buffer.byteLength): void {
    if (buffer.byteLength !== this.arenaBytes || this.#free.length >= this.capacity) return;
    this.#free.push({ buffer, dirty: Math.min(dirty, buffer.byteLength) });
  }
}
