/**
 * The database's counters, reported by `getProperty('sievekv.stats')` (and per region by
 * `sievekv.regions`). Plain numbers bumped on the hot paths (no allocation). The table layer's
 * filter and block counters accumulate per region in `regionTables[r]`, the sink every open table
 * of that region reports to; `tables` sums them.
 */
import { TableStats } from '../sstable/table-stats.js';

export class DBStats {
  /** Point lookups served. */
  gets = 0;
  /** Entries written (a batch counts its entries). */
  writes = 0;
  /** Bytes of write batches committed (the user data written, for write amplification). */
  bytesWritten = 0;
  /** Tables whose key range could hold a looked-up key (consulted by gets). */
  filesConsulted = 0;
  /** Memtable flushes to level 0, and the bytes they wrote. */
  flushes = 0;
  bytesFlushed = 0;
  /** At open: WAL records (or damaged stretches) skipped as damage, and their bytes (only with paranoidChecks off). */
  walRecordsSkipped = 0;
  walBytesSkipped = 0;
  /** At open: bytes of a torn tail dropped from the newest WAL (what a crash leaves; never an acknowledged write). */
  walTornBytes = 0;
  /** Per region: filter checks and negatives, false positives, blocks read, cache hits and misses. */
  readonly regionTables: readonly TableStats[];
  /** Per region: point lookups served. */
  readonly regionGets: number[];

  constructor(regions = 1) {
    this.regionTables = Array.from({ length: regions }, () => new TableStats());
    this.regionGets = new Array<number>(regions).fill(0);
  }

  /** The table counters summed over regions. */
  get tables(): TableStats {
    if (this.regionTables.length === 1) return this.regionTables[0]!;
    const sum = new TableStats();
    for (const t of this.regionTables) sum.add(t);
    return sum;
  }

  toJSON(): Record<string, number> {
    const t = this.tables;
    return {
      gets: this.gets,
      writes: this.writes,
      bytesWritten: this.bytesWritten,
      filesConsulted: this.filesConsulted,
      filterChecks: t.filterChecks,
      filterNegatives: t.filterNegatives,
      filterFalsePositives: t.filterFalsePositives,
      blocksRead: t.blocksRead,
      blockCacheHits: t.blockCacheHits,
      blockCacheMisses: t.blockCacheMisses,
      flushes: this.flushes,
      bytesFlushed: this.bytesFlushed,
      walRecordsSkipped: this.walRecordsSkipped,
      walBytesSkipped: this.walBytesSkipped,
      walTornBytes: this.walTornBytes,
    };
  }
}
