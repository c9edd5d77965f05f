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
 *
 * A dropped SharedArrayBuffer is not freed promptly: V8 does not count it as external memory, so
 * it waits for a full collection that its size does not bring on (dropping 200 touched 4.5 MiB
 * buffers in a loop: 682 MB of RSS as SharedArrayBuffers, 92 MB as ArrayBuffers; 40 cycles of
 * open, 60,000 puts and close: 316 MB against 217-242 before arenas were shared). So arenas are not
 * dropped where it can be helped: a closed database's arenas (`close`) and those given back
 * after it (a pinned memtable's) go to the process's spares, at most SPARE_ARENAS of each size,
 * which the next database opened takes before it allocates.
 */

/**
 * Sets `buffer[start, end)` to zero. A Uint8Array's `fill` on a SharedArrayBuffer stores one byte
 * at a time (V8 keeps each store atomic): 3.6-3.7 ms for a 4.5 MiB arena here, against 0.5-0.6 ms
 * through a BigInt64Array over the same bytes (and 0.3-0.5 ms for a plain ArrayBuffer's `fill`).
 * So the aligned middle is cleared 8 bytes at a time.
 */
export function zeroShared(buffer: SharedArrayBuffer, start: number, end: number): void {
  if (end <= start) return;
  const from = Math.min(end, (start + 7) & ~7);
  const to = Math.max(from, end & ~7);
  if (from > start) new Uint8Array(buffer, start, from - start).fill(0);
  if (to > from) new BigInt64Array(buffer, from, (to - from) / 8).fill(0n);
  if (end > to) new Uint8Array(buffer, to, end - to).fill(0);
}

/**
 * Arenas kept idle by default: a region's memtable takes one at each switch, and its flushed
 * predecessor gives one back; a database of several regions keeps two per region.
 */
const DEFAULT_CAPACITY = 2;

/** Arenas of one size kept for the next database once theirs closed (see the file comment). */
const SPARE_ARENAS = 2;
const spares = new Map<number, FreeArena[]>();

/** Keeps `arena` for the next database of its size, unless that many are kept already. */
function spare(arena: FreeArena): void {
  let list = spares.get(arena.buffer.byteLength);
  if (list === undefined) spares.set(arena.buffer.byteLength, (list = []));
  if (list.length < SPARE_ARENAS) list.push(arena);
}

interface FreeArena {
  readonly buffer: SharedArrayBuffer;
  /** Bytes from the start that may be non-zero. */
  readonly dirty: number;
}

export class ArenaPool {
  readonly #free: FreeArena[] = [];
  #closed = false;

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
    return this.takeZeroedFrom(0);
  }

  /**
   * As `takeZeroed`, but only the bytes from `start` on are sure to be zero: for a caller that
   * writes every byte before `start` (an open reading a memtable image into it), which then need
   * not be cleared first — 3 of a recycled arena's 4.5 MiB after db_bench's overwrite.
   */
  takeZeroedFrom(start: number): SharedArrayBuffer {
    const arena = this.#free.pop() ?? spares.get(this.arenaBytes)?.pop();
    if (arena === undefined) return new SharedArrayBuffer(this.arenaBytes);
    zeroShared(arena.buffer, start, arena.dirty);
    return arena.buffer;
  }

  /**
   * Takes back a buffer no thread reads or writes any more; `dirty`: how many bytes from its start
   * may be non-zero. Only shared buffers of `arenaBytes` are kept (a memtable that outgrew its
   * arena allocated a plain one), and none beyond the capacity.
   */
  give(buffer: ArrayBuffer | SharedArrayBuffer, dirty = buffer.byteLength): void {
    if (!(buffer instanceof SharedArrayBuffer) || buffer.byteLength !== this.arenaBytes) return;
    const arena = { buffer, dirty: Math.min(dirty, buffer.byteLength) };
    if (!this.#closed && this.#free.length < this.capacity) this.#free.push(arena);
    else spare(arena);
  }

  /**
   * The database closed: its idle arenas, and any given back from now on, go to the process's
   * spares for the next database (see the file comment).
   */
  close(): void {
    this.#closed = true;
    for (const arena of this.#free.splice(0)) spare(arena);
  }
}
