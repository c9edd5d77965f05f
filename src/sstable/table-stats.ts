/**
 * Read counters of tables: one TableStats per open table, and any number of aggregate sinks
 * (the database passes one to every table it opens, e.g. per region, and reports it through
 * `getProperty`). Plain numeric fields, incremented in place on the lookup path.
 */
export class TableStats {
  /** Filter probes made (full-table filter or the block's filter), one per lookup at most. */
  filterChecks = 0;
  /** Probes that said "not here": lookups answered without reading a data block. */
  filterNegatives = 0;
  /**
   * Probes that said "may be here" when the table then had no entry for the key visible at the
   * lookup's sequence (absent, or only newer versions): reads the filter could not save.
   */
  filterFalsePositives = 0;
  /** Data blocks read from the file (block cache misses, and reads with no cache). */
  blocksRead = 0;
  /** Of `blocksRead`, those read from the file's bytes held in memory (resident-files.ts): no system call. */
  blocksReadFromMemory = 0;
  /** Data block lookups the block cache answered. */
  blockCacheHits = 0;
  /** Data block lookups the block cache did not answer (each then reads the file). */
  blockCacheMisses = 0;
  /**
   * Of `blockCacheMisses`, the blocks the full cache did not take in (a point lookup's or an
   * iterator's, not missed recently: BlockCache.admit); each was read, used and let go.
   */
  blockCacheDeclined = 0;
  /**
   * Microseconds spent reading data blocks' bytes (the system call, or the copy from memory), an
   * estimate: one read in 8 is timed and counted 8 times (table.ts, TIME_SAMPLE).
   */
  blockReadMicros = 0;
  /** Microseconds spent checking data blocks' checksums and decompressing them, estimated so too. */
  blockDecompressMicros = 0;

  /** Adds `other`'s counters to these. */
  add(other: TableStats): void {
    this.filterChecks += other.filterChecks;
    this.filterNegatives += other.filterNegatives;
    this.filterFalsePositives += other.filterFalsePositives;
    this.blocksRead += other.blocksRead;
    this.blocksReadFromMemory += other.blocksReadFromMemory;
    this.blockCacheHits += other.blockCacheHits;
    this.blockCacheMisses += other.blockCacheMisses;
    this.blockCacheDeclined += other.blockCacheDeclined;
    this.blockReadMicros += other.blockReadMicros;
    this.blockDecompressMicros += other.blockDecompressMicros;
  }

  /** Sets every counter to zero. */
  reset(): void {
    this.filterChecks = 0;
    this.filterNegatives = 0;
    this.filterFalsePositives = 0;
    this.blocksRead = 0;
    this.blocksReadFromMemory = 0;
    this.blockCacheHits = 0;
    this.blockCacheMisses = 0;
    this.blockCacheDeclined = 0;
    this.blockReadMicros = 0;
    this.blockDecompressMicros = 0;
  }
}
