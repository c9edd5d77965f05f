/**
 * Readahead for a table iterator's block reads (RocksDB's automatic iterator readahead). A scan
 * reads a table's data blocks one after another, each a ~4 KiB `pread`: on the development
 * machine the system call costs 2-5 µs, a tenth of a forward scan's time per entry. Once an
 * iterator has read BLOCKS_BEFORE_READAHEAD blocks each right after (or, scanning backwards, right
 * before) the one before, its next read takes a window of the file instead — FIRST_WINDOW bytes,
 * doubling at each window up to MAX_WINDOW — and the blocks inside it are copied from there.
 * A block that breaks the sequence (a seek, a turn) starts the count and the window size over.
 *
 * Only raw file bytes are held: each block's checksum is verified and its contents decoded when
 * it is used, as for a block read alone. A window never reaches past the table's index block
 * (the caller's limit), and bytes in it past the data blocks are never used from it. A window
 * that fails to read is dropped and the block read alone (Table.readAhead): bad bytes elsewhere
 * in the window fail no block but their own.
 *
 * Window buffers come from a small per-thread free list (one per window size) and go back to it
 * when the iterator closes (`release`), so a merge that walks table after table allocates none.
 * A merge caps its inputs' windows lower (MERGE_MAX_WINDOW): it holds one window per input, and
 * a level-0 merge has 20-40 of them.
 */
import { Buffer } from 'node:buffer';
import { invalidArgument } from '../errors.js';

/** Sequential block reads before the next one reads a window. */
export const BLOCKS_BEFORE_READAHEAD = 2;
/** The first window's size; each later one doubles, up to MAX_WINDOW. */
export const FIRST_WINDOW = 16 * 1024;
export const MAX_WINDOW = 256 * 1024;
/**
 * The largest window of a merge's input: 24 inputs of an overwrite's level-0 merge held 6 MiB of
 * windows at MAX_WINDOW. A 64 KiB read still carries ~500 db_bench entries per system call.
 */
export const MERGE_MAX_WINDOW = 64 * 1024;
/** Released window buffers kept for the next iterators of this thread, per window size. */
const SPARE_WINDOWS = 4;

const spareWindows = new Map<number, Buffer[]>();
const EMPTY = Buffer.alloc(0);

export class Readahead {
  /** The window's bytes: file offsets [start, end) are at bytes [0, end - start). */
  bytes: Buffer = EMPTY;
  start = 0;
  end = 0;
  /** The size of the next window (0: the sequence has not made one yet). */
  private window = 0;
  /** The last block used: file offsets [lastStart, lastEnd); -1 before any. */
  private lastStart = -1;
  private lastEnd = -1;
  /** Blocks used in a row, each right after (run > 0) or right before (run < 0) the one before. */
  private run = 0;

  /** @param maxWindow the largest window (and the size of its buffer), at least FIRST_WINDOW. */
  constructor(readonly maxWindow: number = MAX_WINDOW) {
    if (!(maxWindow >= FIRST_WINDOW)) throw invalidArgument(`a readahead window of at most ${maxWindow} bytes is below the first window (${FIRST_WINDOW})`);
  }

  /** True once the blocks used last run in sequence, far enough for windows (a scan, not a seek). */
  get inSequence(): boolean {
    return this.run >= BLOCKS_BEFORE_READAHEAD || -this.run >= BLOCKS_BEFORE_READAHEAD;
  }

  /** True if the window holds the file's bytes [offset, offset + length). */
  holds(offset: number, length: number): boolean {
    return offset >= this.start && offset + length <= this.end;
  }

  /**
   * Notes that the block at [offset, offset + length) was used (read, found in the window or in
   * the block cache): it continues the sequence or starts it over.
   */
  follow(offset: number, length: number): void {
    const end = offset + length;
    if (offset === this.lastEnd && this.run >= 0) this.run++;
    else if (end === this.lastStart && this.run <= 0) this.run--;
    else {
      // A jump or a turn: the block counts as the first of a new sequence.
      this.run = offset === this.lastEnd ? 1 : end === this.lastStart ? -1 : 0;
      this.window = 0;
    }
    this.lastStart = offset;
    this.lastEnd = end;
  }

  /**
   * For a block at [offset, offset + length) that the window does not hold, after `follow`: the
   * window to read for it. 0 for the block alone; or n > 0 to read file offsets [start, start + n)
   * into `bytes[0, n)` (forward from the block, or backward ending with it; not past `limit`),
   * then call `filled(n)`.
   */
  plan(offset: number, length: number, limit: number): number {
    if (!this.inSequence) return 0;
    const window = this.window === 0 ? FIRST_WINDOW : Math.min(2 * this.window, this.maxWindow);
    const end = offset + length;
    const start = this.run > 0 ? offset : Math.max(0, end - window);
    const stop = this.run > 0 ? Math.min(limit, offset + window) : end;
    if (stop - start <= length) return 0; // a block as long as the window is read alone
    this.window = window;
    if (this.bytes === EMPTY) this.bytes = spareWindows.get(this.maxWindow)?.pop() ?? Buffer.allocUnsafe(this.maxWindow);
    this.start = start;
    this.end = start; // empty until the read succeeds (filled)
    return stop - start;
  }

  /** The window `plan` asked for was read: its bytes are [start, start + length). */
  filled(length: number): void {
    this.end = this.start + length;
  }

  /** Drops the window and starts the sequence over (after a window failed to read). */
  reset(): void {
    this.start = this.end = 0;
    this.run = 0;
    this.window = 0;
    this.lastStart = this.lastEnd = -1;
  }

  /** Gives the window's buffer back to this thread's free list; the readahead holds nothing after. */
  release(): void {
    if (this.bytes !== EMPTY) {
      let spares = spareWindows.get(this.maxWindow);
      if (spares === undefined) spareWindows.set(this.maxWindow, (spares = []));
      if (spares.length < SPARE_WINDOWS) spares.push(this.bytes);
    }
    this.bytes = EMPTY;
    this.reset();
  }
}
