/**
 * ArenaPool: memtable arenas used again instead of left to the garbage collector.
 *
 * Every memtable switch used to allocate a fresh arena (writeBufferSize and an eighth), and every
 * flush a copy of the full one for the worker. A dead arena is freed only when V8 collects the
 * object that holds it: V8 lets tens of megabytes of such external memory pile up between
 * collections. bench/db's fillbatch process (1,000,000 db_bench entries in `batchSync`es of
 * 1,000) peaked at 236.9 MB of RSS in the last full run before this pool, 159.0 MB in the first
 * after it (BENCHMARKS.md, issue 10 sessions 8 and 9).
 *
 * So a database keeps one pool: a memtable takes its arena from it, and a flushed memtable that no
 * iterator still reads gives its arena back (MemTable.retire). The arenas are SharedArrayBuffers:
 * a flush's worker reads the immutable memtable's arena in place (SkipList.exportState), where it
 * used to get a copy — a memcpy of the whole memtable per flush on the writers' thread, and a
 * third arena's worth of memory while the flush ran. Only buffers of exactly `arenaBytes` are
 * kept, and at most `capacity` of them, so an idle database holds at most that many arenas
 * beyond its memtables. Single-threaded: the database's thread only.
 */

/**
 * Arenas kept idle by default: a region's memtable takes one at each switch, and its flushed
 * predecessor gives one back; a database of several regions keeps two per region.
 */
const DEFAULT_CAPACITY = 2;

interface FreeArena {
  readonly buffer: SharedArrayBuffer;
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

  /** A shared buffer of `arenaBytes`, every byte zero (a new skiplist's arena): recycled, or new. */
  takeZeroed(): SharedArrayBuffer {
    const arena = this.#free.pop();
    if (arena === undefined) return new SharedArrayBuffer(this.arenaBytes);
    new Uint8Array(arena.buffer, 0, arena.dirty).fill(0);
    return arena.buffer;
  }

  /**
   * Takes back a buffer no thread reads or writes any more; `dirty`: how many bytes from its start
   * may be non-zero. Only shared buffers of `arenaBytes` are kept (a memtable that outgrew its
   * arena allocated a plain one), and none beyond the capacity.
   */
  give(buffer: ArrayBuffer | SharedArrayBuffer, dirty = buffer.byteLength): void {
    if (!(buffer instanceof SharedArrayBuffer) || buffer.byteLength !== this.arenaBytes || this.#free.length >= this.capacity) return;
    this.#free.push({ buffer, dirty: Math.min(dirty, buffer.byteLength) });
  }
}
