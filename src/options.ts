/**
 * Database options: the public `Options` (all optional) and `resolveOptions`, the one place that
 * fills defaults and validates. Every default says why it is what it is.
 */
import { invalidArgument } from './errors.js';
import { BloomFilterPolicy } from './filter/bloom.js';
import { BlockedBloomFilterPolicy } from './filter/blocked-bloom.js';
import type { FilterPolicy } from './filter/policy.js';
import type { FileSystem } from './fs/file-system.js';
import { NodeFileSystem } from './fs/node-fs.js';
import { availableParallelism } from 'node:os';
import { CompressionType } from './sstable/compression.js';

export type CompressionName = 'none' | 'snappy' | 'lz4';
export type FilterScope = 'block' | 'table' | 'both';
/** How the worker threads run against the database's thread: see `Options.backgroundPriority`. */
export type BackgroundPriority = 'low' | 'normal';

export interface Options {
  /** Create the directory and an empty database if there is none. @defaultValue true */
  createIfMissing?: boolean;
  /** Fail with INVALID_ARGUMENT if a database already exists. @defaultValue false */
  errorIfExists?: boolean;
  /**
   * Open without the lock and write nothing at all (no WAL, MANIFEST, LOG, lock file, flush or
   * compaction), so a second process can read a database a writer holds open: it sees the state
   * on disk at the open (tables, and the WALs replayed in memory) until `db.refresh()`. Writes are
   * NOT_SUPPORTED; the database must exist (`createIfMissing` is ignored). @defaultValue false
   */
  readOnly?: boolean;
  /**
   * A damaged WAL record (anything but a torn tail of the newest WAL) fails the open with
   * CORRUPTION. With `false`, only the damaged bytes are skipped, counted in `sievekv.stats` and
   * LOG, and the WAL is kept in `lost/`. A damaged MANIFEST, CURRENT or table is CORRUPTION
   * either way. @defaultValue true (LevelDB's default is false; losing acknowledged writes
   * silently is not a default we want)
   */
  paranoidChecks?: boolean;
  /**
   * Bytes of writes a memtable collects before it is flushed to a level-0 table. Larger means
   * fewer, larger L0 files and longer recovery. @defaultValue 4 MiB (LevelDB's)
   */
  writeBufferSize?: number;
  /** Target uncompressed size of a data block. @defaultValue 4096 (LevelDB's; one page) */
  blockSize?: number;
  /** Entries between full keys in a block. @defaultValue 16 (LevelDB's) */
  blockRestartInterval?: number;
  /**
   * Block compression. `lz4` is fastest to decode but only sievekv (and RocksDB) read it; use
   * `none` or `snappy` for files LevelDB must open. @defaultValue 'lz4'
   */
  compression?: CompressionName;
  /**
   * Builds the filters that let a lookup skip tables and blocks; `null` for none.
   * @defaultValue new BloomFilterPolicy(10): ≈1% false positives for 10 bits per key, and
   * LevelDB reads it.
   */
  filterPolicy?: FilterPolicy | null;
  /**
   * The policy of the whole-table filter (scopes `table` and `both`), which only sievekv reads, so
   * it can be stronger than LevelDB's Bloom: LevelDB's hash lets ~12% of absent keys that sit next
   * to present ones through at 10 bits/key (BENCHMARKS.md, SST). The blocked Bloom filter probes
   * one cache line per key and is built from the hash the table's key sketch computes anyway
   * (docs/filters.md).
   * @defaultValue new BlockedBloomFilterPolicy(15) when `filterPolicy` is left to its default;
   * otherwise `filterPolicy` (null turns both off).
   */
  tableFilterPolicy?: FilterPolicy | null;
  /**
   * `block`: LevelDB's filter block, one filter per 2 KiB of data (LevelDB uses it). `table`: one
   * filter over the whole table, asked before the index is searched (LevelDB ignores it). `both`:
   * each table carries both, so LevelDB still uses its filters while sievekv answers most misses
   * without touching the index.
   * @defaultValue 'both': a miss costs about half (BENCHMARKS.md) for ~1% more table bytes.
   */
  filterScope?: FilterScope;
  /** Bytes of uncompressed blocks kept in memory. @defaultValue 8 MiB (LevelDB's) */
  blockCacheSize?: number;
  /**
   * Bytes of table file images kept in memory once reads keep coming back to a file (4 data
   * blocks read from it): each data block a lookup or a seek reads joins the file's image once
   * read from the file and verified, and is decoded from memory after that instead of asking the
   * OS again — as LevelDB's mmap-ed tables are paged in. An image counts at its file's size;
   * least recently used files go first; 0 turns it off. Off by default because the process then
   * holds what it read, up to this size, and gains only once a table's blocks are read again:
   * with 128 MiB, random `getSync`s on
   * a settled 1M-key database took 15-23% less time, but in bench/db, whose reads meet merges still
   * running, no less (11.8 against 11.2 µs on copies of one database), seeks 18% less, for peak
   * RSS +68-80 MB (BENCHMARKS.md, session 16).
   * @defaultValue 0
   */
  tableFileCacheSize?: number;
  /**
   * Map table files into memory for reads (mmap, read-only), as LevelDB does on 64-bit systems:
   * a lookup's block read is then a copy out of the page cache, with no system call (scans still
   * read 256 KiB windows ahead with `pread`). Random `getSync`s on a settled 1M-key database took
   * 1.0 µs (16%) less here (4.7-5.6 µs against 5.9-6.7, BENCHMARKS.md, session 32). Off by
   * default for memory: the mapped pages reads touch count in the process's RSS (a read fault
   * maps the cached pages of the 64 KiB around it), as LevelDB's do, and random reads over a 70
   * MB database raised bench/db's peak RSS from about 135 MB to 207 (LevelDB's: 160). At most
   * 1,000 files are mapped per thread (LevelDB's limit), the rest read. Needs the native addon
   * built at install (a C compiler); without it, or on a file system that cannot map (the
   * in-memory one), tables are read with `pread`. A mapped table takes no image
   * (`tableFileCacheSize`). Through a map, the OS reports a disk's read error, or a table file
   * another program truncated, as SIGBUS, which ends the process, where a `pread` gives
   * IO_ERROR: as with LevelDB.
   * @defaultValue false
   */
  mmapReads?: boolean;
  /** Tables kept open (file handle, index, filter). @defaultValue 1000 (LevelDB's) */
  maxOpenFiles?: number;
  /** Target size of a compaction output table. @defaultValue 2 MiB (LevelDB's) */
  maxFileSize?: number;
  /** Level-0 files that trigger a compaction. @defaultValue 4 (LevelDB's) */
  l0CompactionTrigger?: number;
  /**
   * Level-0 files at which writes are delayed. @defaultValue 20 (RocksDB's; LevelDB's is 8). A
   * whole-table filter makes a level-0 file cost a point lookup one filter probe, and letting level
   * 0 grow under a burst of writes makes each merge into level 1 take more new data per rewrite of
   * level 1: 1,000,000 random batched writes and as many overwrites moved 45% fewer bytes into
   * level 1 and ran 1.2-1.3× (writes) and 1.1× (overwrites) as fast as at 8 (BENCHMARKS.md, issue 10
   * session 8). Reads pay one filter probe more per level-0 file.
   */
  l0SlowdownTrigger?: number;
  /** Level-0 files at which writes wait for compaction. @defaultValue 36 (RocksDB's; LevelDB's is 12) */
  l0StopTrigger?: number;
  /** Target bytes of level 1; level L holds this times `levelMultiplier`^(L-1). @defaultValue 10 MiB */
  maxBytesForLevelBase?: number;
  /** @defaultValue 10 (LevelDB's) */
  levelMultiplier?: number;
  /** Verify block checksums on every read. @defaultValue true */
  verifyChecksums?: boolean;
  /** Bits per key of the memtable's own bloom, which answers misses without a search. @defaultValue 10 */
  memtableBloomBitsPerKey?: number;
  /**
   * The largest write batch (its encoding: 12 bytes plus each entry's key, value and a few bytes
   * of lengths) a write may carry; a larger one, or a single value that large, is refused with
   * INVALID_ARGUMENT before anything is written. A batch is held whole in memory several times
   * over on its way (the operations, the encoding, the WAL record, the memtable): about 5× its
   * size at peak. @defaultValue 64 MiB
   */
  maxBatchSize?: number;
  /**
   * Worker threads for flushes and compactions, 1 or 2. One runs every job (a flush before the
   * rest of a merge); a second runs the second part of a level-0 merge split in two while writers
   * are slowed. Each is a V8 heap of its own. @defaultValue 1 on a machine of 2 cores or fewer
   * (the writer and one worker keep both busy: a second worker cost 15% more CPU and 40-80 MB of
   * RSS; random batched writes ran 10-20% slower with it, overwrites 1-8% faster; BENCHMARKS.md),
   * else 2
   */
  backgroundThreads?: number;
  /**
   * The CPU priority of the worker threads. `'low'`: each lowers its own (Linux: a thread's nice
   * value, 10 above the process's; RocksDB's opt-in `LowerThreadPoolCPUPriority` goes to 19), so
   * when more threads are runnable than there are cores, reads and writes on the database's thread
   * go first and flushes and merges take what is left. Elsewhere (no per-thread priority) it does
   * nothing; a thread cannot raise its priority back without privileges, so it stays low. On two
   * cores, random `getSync`s beside the merges an open started ran 16% faster with it (median of
   * 9 paired runs; absent keys right after the open 4%, of 15), but random batched sync writes 11%
   * slower (3 of 3 pairs), and on a machine kept busy merges could fall behind the writers
   * (BENCHMARKS.md, session 24): for read-mostly programs. `'normal'`: the process's priority.
   * @defaultValue 'normal'
   */
  backgroundPriority?: BackgroundPriority;
  /**
   * Whether a merge no writer waits for waits while the database is being read. Such a merge (no
   * write since the last look, level 0 below `l0SlowdownTrigger`) starts 50-100 ms after the last
   * read, at the first look after a write, or once it has waited about as long as it would take
   * to run (its input at 25 MB/s; 50 ms to 5 s). The open's flush of the memtables it replayed waits the
   * same way (at most 10 s; any wait for a flush starts it), and their WALs stay until it runs.
   * On two cores, absent-key reads right after an open took 2.4-2.8 µs with it against 3.7-4.9
   * (the worker and V8's compiler threads take a reader's core; BENCHMARKS.md, session 29).
   * `false`: merges start as soon as they are due (LevelDB's way). Writers, `compactRange` and a
   * read-only database are not affected. @defaultValue true
   */
  deferMergesDuringReads?: boolean;
  /** Where the bytes go. @defaultValue the real file system (NodeFileSystem) */
  fs?: FileSystem;
}

export interface ResolvedOptions {
  readonly createIfMissing: boolean;
  readonly errorIfExists: boolean;
  readonly readOnly: boolean;
  readonly paranoidChecks: boolean;
  readonly writeBufferSize: number;
  readonly blockSize: number;
  readonly blockRestartInterval: number;
  readonly compression: CompressionType;
  readonly filterPolicy: FilterPolicy | null;
  readonly tableFilterPolicy: FilterPolicy | null;
  readonly filterScope: FilterScope;
  readonly blockCacheSize: number;
  readonly tableFileCacheSize: number;
  readonly mmapReads: boolean;
  readonly maxOpenFiles: number;
  readonly maxFileSize: number;
  readonly l0CompactionTrigger: number;
  readonly l0SlowdownTrigger: number;
  readonly l0StopTrigger: number;
  readonly maxBytesForLevelBase: number;
  readonly levelMultiplier: number;
  readonly verifyChecksums: boolean;
  readonly memtableBloomBitsPerKey: number;
  readonly maxBatchSize: number;
  readonly backgroundThreads: number;
  readonly backgroundPriority: BackgroundPriority;
  readonly deferMergesDuringReads: boolean;
  readonly fs: FileSystem;
}

const KNOWN = new Set<string>([
  'createIfMissing', 'errorIfExists', 'readOnly', 'paranoidChecks', 'writeBufferSize', 'blockSize',
  'blockRestartInterval', 'compression', 'filterPolicy', 'tableFilterPolicy', 'filterScope', 'blockCacheSize', 'tableFileCacheSize', 'mmapReads',
  'maxOpenFiles', 'maxFileSize', 'l0CompactionTrigger', 'l0SlowdownTrigger', 'l0StopTrigger',
  'maxBytesForLevelBase', 'levelMultiplier', 'verifyChecksums', 'memtableBloomBitsPerKey', 'maxBatchSize', 'backgroundThreads', 'backgroundPriority', 'deferMergesDuringReads', 'fs',
]);

const COMPRESSION: Record<CompressionName, CompressionType> = {
  none: CompressionType.NONE,
  snappy: CompressionType.SNAPPY,
  lz4: CompressionType.LZ4,
};

function bool(options: Options, name: keyof Options, fallback: boolean): boolean {
  const v = options[name];
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') throw invalidArgument(`option ${name} must be a boolean, got ${typeof v}`);
  return v;
}

function int(options: Options, name: keyof Options, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const v = options[name];
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw invalidArgument(`option ${name} must be an integer in [${min}, ${max}], got ${String(v)}`);
  }
  return v;
}

function checkPolicy(name: string, policy: FilterPolicy | null): void {
  if (
    policy !== null &&
    (typeof policy !== 'object' ||
      typeof policy.name !== 'string' ||
      typeof policy.createFilter !== 'function' ||
      typeof policy.keyMayMatch !== 'function' ||
      typeof policy.newProbe !== 'function')
  ) {
    throw invalidArgument(`option ${name} must implement FilterPolicy (name, createFilter, keyMayMatch, newProbe) or be null`);
  }
}

/** Fills defaults and validates; throws INVALID_ARGUMENT naming the first bad option. */
export function resolveOptions(options: Options = {}): ResolvedOptions {
  if (options === null || typeof options !== 'object') throw invalidArgument('options must be an object');
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key)) throw invalidArgument(`unknown option ${key}`);
  }
  const compression = options.compression === undefined ? 'lz4' : options.compression;
  if (typeof compression !== 'string' || !Object.hasOwn(COMPRESSION, compression)) {
    throw invalidArgument(`option compression must be 'none', 'snappy' or 'lz4', got ${String(compression)}`);
  }
  const filterScope = options.filterScope === undefined ? 'both' : options.filterScope;
  if (filterScope !== 'block' && filterScope !== 'table' && filterScope !== 'both') {
    throw invalidArgument(`option filterScope must be 'block', 'table' or 'both', got ${String(filterScope)}`);
  }
  const backgroundPriority = options.backgroundPriority === undefined ? 'normal' : options.backgroundPriority;
  if (backgroundPriority !== 'low' && backgroundPriority !== 'normal') {
    throw invalidArgument(`option backgroundPriority must be 'low' or 'normal', got ${String(backgroundPriority)}`);
  }
  const filterPolicy = options.filterPolicy === undefined ? new BloomFilterPolicy(10) : options.filterPolicy;
  checkPolicy('filterPolicy', filterPolicy);
  const tableFilterPolicy =
    options.tableFilterPolicy !== undefined
      ? options.tableFilterPolicy
      : options.filterPolicy === undefined
        ? new BlockedBloomFilterPolicy(15)
        : filterPolicy;
  checkPolicy('tableFilterPolicy', tableFilterPolicy);
  const fs = options.fs ?? new NodeFileSystem();
  if (typeof fs !== 'object' || typeof fs.createWritable !== 'function') {
    throw invalidArgument('option fs must implement FileSystem');
  }
  const resolved: ResolvedOptions = {
    createIfMissing: bool(options, 'createIfMissing', true),
    errorIfExists: bool(options, 'errorIfExists', false),
    readOnly: bool(options, 'readOnly', false),
    paranoidChecks: bool(options, 'paranoidChecks', true),
    writeBufferSize: int(options, 'writeBufferSize', 4 * 1024 * 1024, 1024, 1 << 30),
    blockSize: int(options, 'blockSize', 4096, 128, 64 * 1024 * 1024),
    blockRestartInterval: int(options, 'blockRestartInterval', 16, 1, 1 << 16),
    compression: COMPRESSION[compression],
    filterPolicy,
    tableFilterPolicy: filterPolicy === null ? null : tableFilterPolicy,
    filterScope,
    blockCacheSize: int(options, 'blockCacheSize', 8 * 1024 * 1024, 0),
    tableFileCacheSize: int(options, 'tableFileCacheSize', 0, 0),
    maxOpenFiles: int(options, 'maxOpenFiles', 1000, 10),
    maxFileSize: int(options, 'maxFileSize', 2 * 1024 * 1024, 1024, 1 << 30),
    l0CompactionTrigger: int(options, 'l0CompactionTrigger', 4, 1, 1000),
    l0SlowdownTrigger: int(options, 'l0SlowdownTrigger', 20, 1, 1000),
    l0StopTrigger: int(options, 'l0StopTrigger', 36, 1, 1000),
    maxBytesForLevelBase: int(options, 'maxBytesForLevelBase', 10 * 1024 * 1024, 1024),
    levelMultiplier: int(options, 'levelMultiplier', 10, 2, 1000),
    verifyChecksums: bool(options, 'verifyChecksums', true),
    mmapReads: bool(options, 'mmapReads', false),
    memtableBloomBitsPerKey: int(options, 'memtableBloomBitsPerKey', 10, 0, 64),
    maxBatchSize: int(options, 'maxBatchSize', 64 * 1024 * 1024, 1024, 1 << 30),
    backgroundThreads: int(options, 'backgroundThreads', availableParallelism() > 2 ? 2 : 1, 1, 2),
    backgroundPriority,
    deferMergesDuringReads: bool(options, 'deferMergesDuringReads', true),
    fs,
  };
  if (resolved.readOnly && resolved.errorIfExists) {
    throw invalidArgument('options readOnly and errorIfExists exclude each other: a read-only open needs an existing database');
  }
  if (!(resolved.l0CompactionTrigger <= resolved.l0SlowdownTrigger && resolved.l0SlowdownTrigger <= resolved.l0StopTrigger)) {
    throw invalidArgument('options must satisfy l0CompactionTrigger <= l0SlowdownTrigger <= l0StopTrigger');
  }
  return resolved;
}

/** Every option name `resolveOptions` accepts: what an adapter (sievekv/level) passes through. */
export const OPTION_NAMES: ReadonlySet<string> = KNOWN;
