/**
 * The database's counters, reported by `getProperty('sievekv.stats')` (and per region by
 * `sievekv.regions`). Plain numbers bumped on the hot paths (no allocation). The table layer's
 * filter and block counters accumulate per region in `regionTables[r]`, the sink every open table
 * of that region reports to; `tables` sums them.
 */
import { performance } from 'node:perf_hooks';
import type { ResidentFiles } from '../sstable/resident-files.js';
import { TableStats } from '../sstable/table-stats.js';

/** Why writers waited (LevelDB's stall reasons). */
export type StallReason = 'memtableFull' | 'l0Slowdown' | 'l0Stop';

/** Time writers spent waiting on the database's thread or in its queue, by reason. */
export class StallStats {
  /** Microseconds waited, and how many waits, per reason. */
  readonly micros: Record<StallReason, number> = { memtableFull: 0, l0Slowdown: 0, l0Stop: 0 };
  readonly count: Record<StallReason, number> = { memtableFull: 0, l0Slowdown: 0, l0Stop: 0 };

  /** Records a wait for `reason` that began at `since` (performance.now()); returns now. */
  add(reason: StallReason, since: number): number {
    const now = performance.now();
    this.micros[reason] += Math.round((now - since) * 1000);
    this.count[reason]++;
    return now;
  }
}

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
  /** Writers' waits for a flush (memtable full) or for compaction (level 0 deep). */
  readonly stalls = new StallStats();
  /** Per region: filter checks and negatives, false positives, blocks read, cache hits and misses. */
  readonly regionTables: readonly TableStats[];
  /** Per region: point lookups served. */
  readonly regionGets: number[];

  constructor(regions = 1) {
    this.regionTables = Array.from({ length: regions }, () => new TableStats());
    this.regionGets = new Array<number>(regions).fill(0);
  }

  /** The database's table file images in memory (options.tableFileCacheSize), for the report. */
  residentFiles: ResidentFiles | undefined = undefined;

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
      blocksReadFromMemory: t.blocksReadFromMemory,
      tableFileCacheBytes: this.residentFiles?.bytes ?? 0,
      tableFileCacheFiles: this.residentFiles?.files ?? 0,
      blockCacheHits: t.blockCacheHits,
      blockCacheMisses: t.blockCacheMisses,
      blockCacheDeclined: t.blockCacheDeclined,
      blockReadMicros: Math.round(t.blockReadMicros),
      blockDecompressMicros: Math.round(t.blockDecompressMicros),
      flushes: this.flushes,
      bytesFlushed: this.bytesFlushed,
      walRecordsSkipped: this.walRecordsSkipped,
      walBytesSkipped: this.walBytesSkipped,
      walTornBytes: this.walTornBytes,
      stallMicrosMemtableFull: this.stalls.micros.memtableFull,
      stallMicrosL0Slowdown: this.stalls.micros.l0Slowdown,
      stallMicrosL0Stop: this.stalls.micros.l0Stop,
      stallsMemtableFull: this.stalls.count.memtableFull,
      stallsL0Slowdown: this.stalls.count.l0Slowdown,
      stallsL0Stop: this.stalls.count.l0Stop,
    };
  }
}
