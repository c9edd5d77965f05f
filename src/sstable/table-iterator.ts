/**
 * The iterator over one table's entries: a two-level iterator (LevelDB's
 * table/two_level_iterator.cc). The index block iterator chooses the data block; a data block
 * iterator walks it. Forward and backward, with seeks; empty data blocks (LevelDB never writes
 * them, a foreign writer might) are skipped in both directions.
 *
 * Pinning: the iterator holds the index block and the current data block (its own references;
 * the block cache may evict them meanwhile). `close()` drops them and tells the owner (the table
 * cache releases its hold on the table). Keys and values are borrowed until the next move.
 *
 * Errors: a block that fails to read or verify throws CORRUPTION (or IO_ERROR) from the move that
 * needed it, and leaves the iterator invalid.
 */
import { ErrorCode, invalidArgument, SieveError } from '../errors.js';
import type { KeyProbes } from '../filter/key-probes.js';
import type { InternalIterator } from '../iterator/internal-iterator.js';
import { Block, BlockIterator } from './block.js';
import { BlockHandle } from './footer.js';
import { Readahead } from './readahead.js';
import type { Table } from './table.js';

export interface TableIteratorOptions {
  /**
   * Put the data blocks read into the block cache. A compaction's scan reads each block once and
   * passes false, so it does not flush the blocks lookups need. @defaultValue true
   */
  fillCache?: boolean;
  /**
   * The largest window a scan reads ahead (readahead.ts); a merge's inputs pass MERGE_MAX_WINDOW.
   * @defaultValue MAX_WINDOW
   */
  maxReadahead?: number;
  /**
   * Once closed, the iterator goes back to its table, which hands it out again (set up afresh) to
   * its next `newIterator` asking for one: a seek-and-read-one loop then makes no table, block or
   * readahead iterator per seek. The caller must drop every reference to it when it closes it.
   * Not with `fillCache: false` or a `maxReadahead`. @defaultValue false
   */
  recycle?: boolean;
}

/** The most bytes of buffers a closed recycled iterator may hold and still be kept by its table. */
const SPARE_MAX_RETAINED = 4096;

/** An empty block: the data iterator's target before any block is loaded. */
const NO_ENTRIES = new Block(new Uint8Array(4));

/** True if an iterator with `options` may be recycled: the default fill and readahead. */
export function recyclable(options: TableIteratorOptions): boolean {
  return options.fillCache !== false && options.maxReadahead === undefined;
}

export class TableIterator implements InternalIterator {
  /** Called once by `close()` (the table cache's release of its reference). */
  onClose: (() => void) | undefined;
  private table: Table | undefined;
  private readonly fillCache: boolean;
  private readonly recycle: boolean;
  private readonly index: BlockIterator;
  private readonly data: BlockIterator;
  /** True when `data` holds the block at `dataOffset`. */
  private dataLoaded = false;
  private dataOffset = -1;
  private readonly handle = new BlockHandle();
  /** The data block this iterator pins (Block.pin): its bytes stay until it moves on or closes. */
  private pinned: Block | null = null;
  /** File bytes read ahead of a scan (readahead.ts): a window only once blocks come in sequence. */
  private readonly ahead: Readahead;

  constructor(table: Table, options: TableIteratorOptions = {}) {
    this.table = table;
    this.fillCache = options.fillCache ?? true;
    this.recycle = options.recycle === true;
    if (this.recycle && !recyclable(options)) {
      throw invalidArgument('a recycled table iterator takes the default fillCache and maxReadahead');
    }
    this.ahead = new Readahead(options.maxReadahead);
    this.index = table.indexBlock.newIterator(table.comparator);
    this.data = new BlockIterator(table.comparator, NO_ENTRIES);
  }

  valid(): boolean {
    return this.dataLoaded && this.data.valid();
  }

  seekToFirst(): void {
    this.checkOpen().index.seekToFirst();
    this.loadDataBlock();
    if (this.dataLoaded) this.data.seekToFirst();
    this.skipEmptyForward();
  }

  seekToLast(): void {
    this.checkOpen().index.seekToLast();
    this.loadDataBlock();
    if (this.dataLoaded) this.data.seekToLast();
    this.skipEmptyBackward();
  }

  /** Positions at the first entry ≥ `target` (an internal key). */
  seek(target: Uint8Array): void {
    this.checkOpen().index.seek(target);
    this.seekInDataBlock(target);
  }

  /**
   * See InternalIterator.seekIfMayMatch: the full-table filter (unless `tableFilterAsked`), then
   * the index and the per-block filter of the block it points to. Why that block's filter
   * suffices: the index points to the first block whose separator is ≥ target; if every key of
   * that block is below target, the seek lands on the next block's first entry, and a separator
   * (LevelDB's shortest separator, or a block's last key) lies below the next block's first user
   * key, which is then above target's.
   */
  seekIfMayMatch(target: Uint8Array, probes: KeyProbes, tableFilterAsked = false): boolean {
    const table = this.checkOpen().table!;
    if (!tableFilterAsked && !table.fullFilterMayMatch(probes)) return false;
    const index = this.index;
    index.seek(target);
    if (!index.valid()) {
      this.seekInDataBlock(target);
      return true;
    }
    const handle = this.handle;
    handle.decodeFrom(index.data, index.valueStart, index.valueEnd, table.path, table.indexBlock.offset);
    if (!table.blockFilterMayMatch(handle.offset, probes)) return false;
    this.seekInDataBlock(target, true);
    return true;
  }

  /**
   * The data block the index is at, sought to `target`, or the next non-empty one. `handleDecoded`:
   * `handle` already holds the index entry's block handle.
   */
  private seekInDataBlock(target: Uint8Array, handleDecoded = false): void {
    if (handleDecoded) this.loadBlockAtHandle();
    else this.loadDataBlock();
    if (this.dataLoaded) this.data.seek(target);
    this.skipEmptyForward();
  }

  next(): void {
    if (!this.valid()) throw invalidArgument('TableIterator.next on an invalid iterator');
    this.data.next();
    this.skipEmptyForward();
  }

  prev(): void {
    if (!this.valid()) throw invalidArgument('TableIterator.prev on an invalid iterator');
    this.data.prev();
    this.skipEmptyBackward();
  }

  /** The current internal key, borrowed until the iterator moves. Requires `valid()`. */
  key(): Uint8Array {
    return this.data.key();
  }

  /** The current value, borrowed until the iterator moves. Requires `valid()`. */
  value(): Uint8Array {
    return this.data.value();
  }

  /**
   * @internal Table.newIterator: sets a closed recycled iterator up over `table` again, as the
   * constructor would (unpositioned; the data iterator and readahead were cleared at close).
   */
  reopen(table: Table): void {
    this.table = table;
    this.index.setBlock(table.indexBlock);
    this.dataOffset = -1;
  }

  /**
   * Releases the blocks and the table; idempotent. Any later call but `valid`/`close` throws
   * CLOSED (for a recycled iterator: until its table hands it out again).
   */
  close(): void {
    const table = this.table;
    if (table === undefined) return;
    this.table = undefined;
    this.dataLoaded = false;
    this.data.setBlock(NO_ENTRIES);
    this.index.setBlock(NO_ENTRIES);
    this.pinned?.unpin();
    this.pinned = null;
    this.ahead.release();
    const onClose = this.onClose;
    this.onClose = undefined;
    try {
      onClose?.();
    } finally {
      // One whose buffers grew (long keys, reverse steps) is left to the collector: a table
      // keeps its spare as long as the table stays open.
      if (this.recycle && this.index.retainedBytes + this.data.retainedBytes <= SPARE_MAX_RETAINED) table.keepSpareIterator(this);
    }
  }

  private checkOpen(): this {
    if (this.table === undefined) throw new SieveError(ErrorCode.CLOSED, 'table iterator is closed');
    return this;
  }

  /** Loads the block the index points at (unless it is loaded already); unloads if none. */
  private loadDataBlock(): void {
    const index = this.index;
    if (!index.valid()) {
      this.dataLoaded = false;
      return;
    }
    const table = this.table!;
    this.handle.decodeFrom(index.data, index.valueStart, index.valueEnd, table.path, table.indexBlock.offset);
    this.loadBlockAtHandle();
  }

  /** Loads the block `handle` names (decoded from the index's current entry), unless it is loaded already. */
  private loadBlockAtHandle(): void {
    const handle = this.handle;
    const table = this.table!;
    if (this.dataLoaded && handle.offset === this.dataOffset) return;
    this.dataLoaded = false;
    const block = table.readBlock(handle, this.fillCache, false, this.ahead);
    block.pin();
    this.data.setBlock(block);
    this.pinned?.unpin();
    this.pinned = block;
    this.dataOffset = handle.offset;
    this.dataLoaded = true;
  }

  private skipEmptyForward(): void {
    while (!this.dataLoaded || !this.data.valid()) {
      if (!this.index.valid()) {
        this.dataLoaded = false;
        return;
      }
      this.index.next();
      this.loadDataBlock();
      if (this.dataLoaded) this.data.seekToFirst();
    }
  }

  private skipEmptyBackward(): void {
    while (!this.dataLoaded || !this.data.valid()) {
      if (!this.index.valid()) {
        this.dataLoaded = false;
        return;
      }
      this.index.prev();
      this.loadDataBlock();
      if (this.dataLoaded) this.data.seekToLast();
    }
  }
}
