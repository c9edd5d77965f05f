/**
 * Readahead for a table iterator's block reads (RocksDB's automatic iterator readahead). A scan
 * reads a table's data blocks one after another, each a ~4 KiB `pread`: on the development
 * machine the system call costs 2-5 µs, a tenth of a forward scan's time per entry. Once an
 * iterator has read BLOCKS_BEFORE_READAHEAD blocks each right after (or, scanning backwards, right
 * before) the one before, its next read takes a window of the file instead — FIRST_WINDOW bytes,
 * doubling at each window up to MAX_WINDOW — and the blocks inside it are copied from there.
 * A read that breaks the sequence (a seek) goes back to single blocks.
 *
 * Only raw file bytes are held: each block's checksum is verified and its contents decoded when
 * it is used, as for a block read alone. Bytes past the table's data (its meta blocks, index and
 * footer) may be read with the last window; they are never used from it.
 */

/** Sequential block reads before the next one reads a window. */
export const BLOCKS_BEFORE_READAHEAD = 2;
/** The first window's size; each later one doubles, up to MAX_WINDOW. */
export const FIRST_WINDOW = 16 * 1024;
export const MAX_WINDOW = 256 * 1024;

export class Readahead {
  /** The window's bytes: file offsets [start, end) are at bytes [0, end - start). */
  bytes: Buffer = EMPTY;
  start = 0;
  end = 0;
  /** The size of the next window (0 before the first). */
  private window = 0;
  /** The last block read: file offsets [lastStart, lastEnd); -1 before any. */
  private lastStart = -1;
  private lastEnd = -1;
  /** Blocks read in a row, each right after (forward > 0) or before (< 0) the one before. */
  private run = 0;

  /** True if the window holds the file's bytes [offset, offset + length). */
  holds(offset: number, length: number): boolean {
    return offset >= this.start && offset + length <= this.end;
  }

  /**
   * Notes a read of the block at [offset, offset + length) and returns the window to read for it:
   * 0 for the block alone, or n > 0 to read file offsets [start, start + n) into `bytes[0, n)`
   * (forward from the block, or backward ending with it; not past `limit`, the file's data end),
   * then call `filled(n)`.
   */
  plan(offset: number, length: number, limit: number): number {
    const end = offset + length;
    if (offset === this.lastEnd) this.run = this.run > 0 ? this.run + 1 : 1;
    else if (end === this.lastStart) this.run = this.run < 0 ? this.run - 1 : -1;
    else {
      this.run = 0;
      this.window = 0;
    }
    this.lastStart = offset;
    this.lastEnd = end;
    if (this.run < BLOCKS_BEFORE_READAHEAD && -this.run < BLOCKS_BEFORE_READAHEAD) return 0;
    this.window = this.window === 0 ? FIRST_WINDOW : Math.min(2 * this.window, MAX_WINDOW);
    let start: number;
    let stop: number;
    if (this.run > 0) {
      start = offset;
      stop = Math.min(limit, offset + Math.max(this.window, length));
    } else {
      stop = end;
      start = Math.max(0, end - Math.max(this.window, length));
    }
    if (stop - start <= length) return 0;
    const size = stop - start; // ≤ MAX_WINDOW: a block longer than the window is read alone
    if (this.bytes.length < size) this.bytes = Buffer.allocUnsafe(Math.max(size, Math.min(MAX_WINDOW, 2 * this.bytes.length)));
    this.start = start;
    this.end = start; // empty until the read succeeds (filled)
    return size;
  }

  /** The window `plan` asked for was read: its bytes are [start, start + length). */
  filled(length: number): void {
    this.end = this.start + length;
  }

  /** Notes a block found in the window (it continues the sequence as a read would). */
  noteHit(offset: number, length: number): void {
    this.lastStart = offset;
    this.lastEnd = offset + length;
  }
}

const EMPTY = Buffer.alloc(0);
