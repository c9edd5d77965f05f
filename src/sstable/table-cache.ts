/**
 * TableCache: an LRU of open tables by file number (LevelDB's db/table_cache.cc), so a lookup
 * does not reopen a file and re-read its footer, index, filter and properties every time. Its
 * capacity is the number of tables kept open (LevelDB's max_open_files − 10; default 1000).
 *
 * Files are `<dir>/NNNNNN.ldb`, or LevelDB's older `NNNNNN.sst` when the first does not exist.
 * Tables are opened through the FileSystem seam with the cache's options (filter policies, block
 * cache, checksums, stats sink).
 *
 * References: the cache holds each open table once; every iterator from `newIterator` holds it
 * too. A table leaves the cache when the LRU needs room or on `evict`; its file is closed when the
 * last holder lets go (an iterator's `close`). Lookups hold nothing past their return.
 *
 * Block cache ids: each file number gets one id from the block cache the first time it is opened
 * and keeps it while the file lives, so blocks cached before an LRU close are found again after
 * a reopen (table files never change). `evict(fileNumber)` — for a file being deleted — drops
 * the table, its id and its cached blocks.
 */
import { invalidArgument, isSieveError } from '../errors.js';
import type { KeyProbes } from '../filter/key-probes.js';
import type { FilterPolicy } from '../filter/policy.js';
import type { InternalKeyComparator } from '../format/internal-key-comparator.js';
import { type FileSystem, isNotFound } from '../fs/file-system.js';
import { join } from 'node:path';
import type { BlockCache } from './block-cache.js';
import type { ResidentFiles } from './resident-files.js';
import { type GetStatus, Table, type TableGetResult } from './table.js';
import type { TableIterator, TableIteratorOptions } from './table-iterator.js';
import type { TableStats } from './table-stats.js';

/** LevelDB's max_open_files default (it keeps 10 of them for other files). */
export const DEFAULT_TABLE_CACHE_CAPACITY = 1000;

export interface TableCacheOptions {
  /** Tables kept open (an integer >= 1). @defaultValue 1000 */
  capacity?: number;
  filterPolicies?: readonly FilterPolicy[];
  blockCache?: BlockCache;
  /** @defaultValue true */
  verifyChecksums?: boolean;
  /** Aggregate read counters of every table opened. */
  stats?: TableStats;
  comparator?: InternalKeyComparator;
  /** Images of table files kept in memory once read often (table.ts, resident-files.ts); none → block reads go to the files. */
  residentFiles?: ResidentFiles;
  /** Map each table's file into memory where the file system can (TableOptions.mapFile). @defaultValue false */
  mapFiles?: boolean;
}

/** `NNNNNN.ldb`: the file number in at least six decimal digits (LevelDB's TableFileName). */
export function tableFileName(fileNumber: number): string {
  return `${String(fileNumber).padStart(6, '0')}.ldb`;
}

/** `NNNNNN.sst`: LevelDB's name for tables before 1.14 (SSTTableFileName), still read. */
export function sstTableFileName(fileNumber: number): string {
  return `${String(fileNumber).padStart(6, '0')}.sst`;
}

class CachedTable {
  /** The cache's hold (while listed) plus one per open iterator. */
  refs = 1;
  /** The cache's clock at this table's last use: the least recent is evicted first. */
  lastUse = 0;
  constructor(
    readonly fileNumber: number,
    readonly table: Table,
  ) {}
}

export class TableCache {
  readonly capacity: number;
  /** `findTable` calls answered by an open table. */
  hits = 0;
  /** `findTable` calls that opened the file. */
  misses = 0;
  private readonly fs: FileSystem;
  private readonly dir: string;
  private readonly options: TableCacheOptions;
  /** Open tables by file number. */
  private readonly tables = new Map<number, CachedTable>();
  /**
   * Ticks once per use. A hit only stamps the table (no Map reordering on the lookup path: a get
   * consults up to a dozen tables); an eviction, rare, scans for the oldest stamp.
   */
  private clock = 0;
  /** Block cache id of each file number seen (see the file header). */
  private readonly cacheIds = new Map<number, number>();

  constructor(fs: FileSystem, dir: string, options: TableCacheOptions = {}) {
    const capacity = options.capacity ?? DEFAULT_TABLE_CACHE_CAPACITY;
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw invalidArgument(`table cache capacity must be an integer >= 1, got ${String(capacity)}`);
    }
    this.capacity = capacity;
    this.fs = fs;
    this.dir = dir;
    this.options = options;
  }

  /** Tables open now. */
  get size(): number {
    return this.tables.size;
  }

  /**
   * The open table of `fileNumber` (opening it on a miss), now most recently used. Borrowed: valid
   * until the cache closes it (an LRU eviction or `evict`); use `newIterator` to hold it longer.
   */
  findTable(fileNumber: number, fileSize: number): Table {
    return this.find(fileNumber, fileSize).table;
  }

  /** `Table.get` on the table of `fileNumber` (see table.ts). */
  get(
    fileNumber: number,
    fileSize: number,
    lookupKey: Uint8Array,
    userKey: Uint8Array,
    probes: KeyProbes,
    result: TableGetResult,
  ): GetStatus {
    return this.find(fileNumber, fileSize).table.get(lookupKey, userKey, probes, result);
  }

  /** An iterator over the table of `fileNumber`, holding the table open until it is closed. */
  newIterator(fileNumber: number, fileSize: number, options?: TableIteratorOptions): TableIterator {
    const cached = this.find(fileNumber, fileSize);
    const it = cached.table.newIterator(options);
    cached.refs++;
    it.onClose = () => this.release(cached);
    return it;
  }

  /**
   * Forgets `fileNumber` (its file is being deleted): closes the table once no iterator holds
   * it, and drops its blocks from the block cache.
   */
  evict(fileNumber: number): void {
    const cached = this.tables.get(fileNumber);
    if (cached !== undefined) {
      this.tables.delete(fileNumber);
      this.release(cached);
    }
    const id = this.cacheIds.get(fileNumber);
    if (id !== undefined) {
      this.cacheIds.delete(fileNumber);
      this.options.blockCache?.eraseTable(id);
    }
  }

  /** Drops every table from the cache (each closes once no iterator holds it). */
  close(): void {
    for (const cached of [...this.tables.values()]) {
      this.tables.delete(cached.fileNumber);
      this.release(cached);
    }
  }

  private find(fileNumber: number, fileSize: number): CachedTable {
    const tables = this.tables;
    const cached = tables.get(fileNumber);
    if (cached !== undefined) {
      this.hits++;
      cached.lastUse = ++this.clock;
      return cached;
    }
    this.misses++;
    const opened = new CachedTable(fileNumber, this.open(fileNumber, fileSize));
    opened.lastUse = ++this.clock;
    tables.set(fileNumber, opened);
    if (tables.size > this.capacity) {
      let oldest = opened;
      for (const t of tables.values()) if (t.lastUse < oldest.lastUse) oldest = t;
      tables.delete(oldest.fileNumber);
      this.release(oldest);
    }
    return opened;
  }

  private open(fileNumber: number, fileSize: number): Table {
    const blockCache = this.options.blockCache;
    let cacheId = this.cacheIds.get(fileNumber);
    if (cacheId === undefined && blockCache !== undefined) {
      cacheId = blockCache.newId();
      this.cacheIds.set(fileNumber, cacheId);
    }
    const tableOptions = {
      fileSize,
      cacheId: cacheId ?? 0,
      filterPolicies: this.options.filterPolicies,
      blockCache,
      verifyChecksums: this.options.verifyChecksums,
      stats: this.options.stats,
      comparator: this.options.comparator,
      residentFiles: this.options.residentFiles,
      mapFile: this.options.mapFiles === true,
    };
    const path = join(this.dir, tableFileName(fileNumber));
    try {
      return Table.open(this.fs, path, tableOptions);
    } catch (err) {
      if (!(isSieveError(err) && isNotFound(err))) throw err;
      const oldPath = join(this.dir, sstTableFileName(fileNumber));
      try {
        return Table.open(this.fs, oldPath, tableOptions);
      } catch (oldErr) {
        // Neither name exists: report the modern one, as LevelDB does.
        throw isSieveError(oldErr) && isNotFound(oldErr) ? err : oldErr;
      }
    }
  }

  private release(cached: CachedTable): void {
    if (--cached.refs === 0) cached.table.close();
  }
}
