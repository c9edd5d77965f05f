/**
 * DBImpl: the database engine behind the public `DB` — write path, read path, recovery, flushes,
 * snapshots. Synchronous at its core: every method runs to completion on the JavaScript thread
 * that owns the database, except the one wait worth not blocking for, the WAL's fdatasync under
 * group commit.
 *
 * Write path. A write is a WriteBatch. It gets the next sequence numbers, goes to the WAL as one
 * record, then into the memtables (each entry to its region's), and only then is `lastSequence`
 * advanced: readers read at `lastSequence`, so a write is visible all at once or not at all.
 * - Unsynced writes run synchronously (one write() system call, one memtable insert per entry).
 * - Synced writes use group commit: writers queue; a leader takes every queued batch, writes them
 *   as one WAL record, awaits one asynchronous fdatasync, applies them and resolves them all.
 *   Writes that arrive meanwhile form the next group. A synced write is visible only once durable.
 * - A synchronous write (`writeSync`) that finds a group waiting on its fdatasync finishes that
 *   group first with a blocking sync, so sequence numbers are always applied in order.
 *
 * Memtables. When the regions' memtables together reach `writeBufferSize`, every region switches
 * to a fresh memtable and a new WAL, and the full ones are flushed to level-0 tables. Regions
 * switch together because they share the WAL: a WAL can be deleted only when every entry in it is
 * in a table.
 *
 * Errors. A failure of the WAL or of a flush is latched as the background error: every later
 * write fails with it (nothing is silently lost), reads go on, and reopening recovers every
 * acknowledged write from the WAL and the tables.
 */
import { performance } from 'node:perf_hooks';
import { basename, join } from 'node:path';
import { invalidArgument, isSieveError, notSupported, SieveError, ErrorCode, ioError } from '../errors.js';
import type { FileLock, FileSystem } from '../fs/file-system.js';
import { isNotFound, removeOffThread } from '../fs/file-system.js';
import { KeyProbes } from '../filter/key-probes.js';
import { ArenaPool } from '../memtable/arena-pool.js';
import { EntryRun } from '../memtable/entry-run.js';
import { Lookup, MemTable } from '../memtable/memtable.js';
import { storageBytes, type ListBuffer, type SkipListState } from '../memtable/skiplist.js';
import {
  MAX_IMAGE_WALS,
  MEMTABLE_IMAGE_FILE,
  MEMTABLE_IMAGE_TEMP,
  placeMemTableImage,
  readMemTableImage,
  stampWal,
  writeMemTableImage,
  type ImagePart,
  type ImagePartSource,
  type ImageWriteOptions,
  type WalStamp,
} from './memtable-image.js';
import { ValueType } from '../format/internal-key.js';
import type { ResolvedOptions } from '../options.js';
import { currentFileName, descriptorFileName, FileType, lockFileName, logFileName, parseFileName } from '../version/filenames.js';
import { closedAsMarked, closeMark } from './close-mark.js';
import { NUM_LEVELS, VersionEdit } from '../version/version-edit.js';
import type { Version } from '../version/version.js';
import { VersionSet } from '../version/version-set.js';
import { LogWriter } from '../wal/log-writer.js';
import { BatchEntries, forEachBatchEntry, WriteBatch } from '../wal/write-batch.js';
import {
  checkNoDatabaseLeft,
  checkRouter,
  LOST_DIR,
  mayFlushReplayInBackground,
  moveToLost,
  NO_LOCK,
  replayWal,
  REPLAY_LIMIT_WRITE_BUFFERS,
  type SequenceChain,
  SilentInfoLog,
  syncFile,
  writerStamp,
} from './recovery.js';
import { InfoLog } from './info-log.js';
import { Region, regionDir } from './region.js';
import { SnapshotList, type Snapshot } from './snapshot.js';
import { DBStats } from './stats.js';
import { TableAccess } from './table-access.js';
import { flushMemTable } from '../compaction/jobs.js';
import { BackgroundWork } from './background.js';
import { WriteQueue } from './write-queue.js';
import { captureCheckpointSource, type CheckpointSource } from './checkpoint.js';
import { IteratorTrees, OpenIterators } from './iterators.js';
import { BlockCache } from '../sstable/block-cache.js';
import { ResidentFiles } from '../sstable/resident-files.js';
import type { RegionRouter } from '../shard/region-router.js';
import { singleRegionRouter } from '../shard/region-router.js';

/**
 * Writes install the background jobs that have finished once per this many bytes written, gets
 * once per this many gets (a power of two): a sync loop that never yields does not leave the
 * workers waiting, at ~1 µs per look.
 */
const POLL_BYTES = 64 * 1024;
const POLL_GETS = 1024;
const RESOLVED = Promise.resolve();

/** Adds one put (`type` VALUE) or delete to `batch`; returns it. */
/** Never notified: Atomics.wait on it is a blocking sleep. */
const SLEEP_CELL = new Int32Array(new SharedArrayBuffer(4));
/** Writers at l0SlowdownTrigger sleep 1 ms per this many bytes written (see #countSlowdown). */
const SLOWDOWN_BYTES = 64 * 1024;
/**
 * Reads of a busy writer's state a read-only open or refresh() makes before it gives up: each
 * one is lost only to a writer logging a change meanwhile, which takes it a few milliseconds.
 */
const READ_ONLY_LOAD_ATTEMPTS = 20;

/** Thrown inside #loadReadOnly when the writer moved while it read: read again. */
class WriterMoved extends Error {}

function batchOfOne(batch: WriteBatch, type: ValueType, key: Uint8Array, value: Uint8Array): WriteBatch {
  if (type === ValueType.VALUE) batch.put(key, value);
  else batch.del(key);
  return batch;
}

export class DBImpl {
  readonly stats: DBStats;
  readonly snapshots = new SnapshotList();
  /** Iterators not yet closed: the database ends them when it closes. */
  readonly openIterators = new OpenIterators();
  /** A closed iterator's tree, kept for the next one while the state it reads is current (iterators.ts). */
  readonly iteratorTrees = new IteratorTrees();
  readonly regions: Region[];
  /** The memtables' arenas, recycled (BackgroundHost.arenas). */
  readonly arenas: ArenaPool;
  readonly tables: TableAccess[];
  /** Opened with `readOnly`: no lock, nothing written, `refresh()` re-reads the writer's state. */
  readonly readOnly: boolean;
  /** Replaced whole by a read-only database's `refresh()`; a writer's is the same for its life. */
  #versions: VersionSet;
  readonly #lock: FileLock;
  readonly #info: InfoLog;
  readonly #probes = new KeyProbes();
  #log: LogWriter | null = null;
  #logNumber = 0;
  /** Obsolete files being removed off this thread (#removeObsolete), by path. */
  readonly #removals = new Map<string, Promise<void>>();
  /** The oldest WAL holding records of the live memtables (`mem`); older live WALs hold `imm`'s. */
  #memLogStart = 0;
  /** The first WAL the memtable image on disk holds (0: none): the image goes once that WAL does. */
  #imageWal = 0;
  readonly #memTableBloomBits: number;
  #bgError: SieveError | null = null;
  #closed = false;
  /** Writes that cannot commit at once wait here (see write-queue.ts). */
  readonly #queue: WriteQueue;
  readonly #bg: BackgroundWork;
  /** Reused to encode single-entry writes (putSync/delSync and unsynced put/del): no batch per write. */
  readonly #single = new WriteBatch();

  private constructor(
    readonly dir: string,
    readonly options: ResolvedOptions,
    readonly router: RegionRouter,
    lock: FileLock,
    info: InfoLog,
  ) {
    const fs = options.fs;
    this.readOnly = options.readOnly;
    this.#lock = lock;
    this.#info = info;
    this.#versions = new VersionSet(dir, fs, router.regions.length);
    this.#versions.onInstall = this.#dropKeptTree;
    this.stats = new DBStats(router.regions.length);
    const bloomBits = Math.ceil((options.writeBufferSize / 64) * options.memtableBloomBitsPerKey);
    // A memtable is switched once it holds writeBufferSize bytes; the last write may go a little
    // past it. Untouched pages of the buffer cost no memory, so size it for that from the start.
    // Arenas are recycled through the pool: memtable/arena-pool.ts says why.
    this.arenas = new ArenaPool(storageBytes(options.writeBufferSize + (options.writeBufferSize >>> 3)), 2 * router.regions.length);
    this.#memTableBloomBits = options.memtableBloomBitsPerKey > 0 ? bloomBits : 0;
    this.regions = router.regions.map((_, i) => new Region(i, regionDir(dir, i), () => this.#newMemTable()));
    const blockCache = new BlockCache(options.blockCacheSize);
    const residentFiles = options.tableFileCacheSize > 0 ? new ResidentFiles(options.tableFileCacheSize) : undefined;
    this.stats.residentFiles = residentFiles;
    this.tables = this.regions.map((r) => new TableAccess(fs, r.dir, r.index, options, this.stats, blockCache, residentFiles));
    this.#queue = new WriteQueue({
      checkWritable: () => this.#checkWritable(),
      mustWait: () => this.#mustWait(),
      waitForRoom: () => this.#waitForRoom(),
      commit: (batch, sync, apply) => this.#commit(batch, sync, apply),
      publish: (batch) => this.#publish(batch),
      syncLog: () => this.#log!.sync(),
      syncLogAsync: () => this.#log!.syncAsync(),
      latch: (err) => this.#latch(err),
    });
    this.#bg = new BackgroundWork({
      options,
      versions: this.#versions,
      regions: this.regions,
      tables: this.tables,
      snapshots: this.snapshots,
      stats: this.stats,
      info,
      latch: (err) => this.#latch(err),
      stopped: () => this.#bgError !== null || this.#closed,
      backgroundError: () => this.#bgError,
      deleteObsoleteFiles: () => this.#deleteObsoleteFiles(),
    });
  }

  /** Flush and compaction state (for properties and tests). */
  get background(): BackgroundWork {
    return this.#bg;
  }

  get fs(): FileSystem {
    return this.options.fs;
  }

  get versions(): VersionSet {
    return this.#versions;
  }

  /** The sequence number of the newest visible write. */
  get lastSequence(): number {
    return this.#versions.lastSequence;
  }

  get closed(): boolean {
    return this.#closed;
  }

  get backgroundError(): SieveError | null {
    return this.#bgError;
  }

  // ---------------------------------------------------------------------------------------------
  // Open and recovery

  /** Opens (creating if allowed) the database in `dir`. Synchronous; throws typed errors. */
  static open(dir: string, options: ResolvedOptions, router: RegionRouter = singleRegionRouter): DBImpl {
    if (options.readOnly) return DBImpl.#openReadOnly(dir, options, router);
    const fs = options.fs;
    if (options.createIfMissing) {
      fs.mkdir(dir);
    } else if (!fs.exists(dir)) {
      throw invalidArgument(`${dir} does not exist (createIfMissing is false)`);
    }
    // Once the lock file is ours: another program's lock is looked for unless the directory is as
    // sievekv's last close left it (close-mark.ts).
    const lock = fs.lock(lockFileName(dir), { skipForeignCheck: () => closedAsMarked(fs, dir) });
    let db: DBImpl | undefined;
    try {
      const info = new InfoLog(fs, dir);
      db = new DBImpl(dir, options, router, lock, info);
      db.#recover();
      return db;
    } catch (err) {
      if (db !== undefined) db.#closeFiles();
      lock.release();
      throw err;
    }
  }

  #recover(): void {
    const fs = this.fs;
    const options = this.options;
    const exists = fs.exists(currentFileName(this.dir));
    if (!exists) checkNoDatabaseLeft(fs, this.dir, this.regions.map((r) => r.dir));
    if (!exists && !options.createIfMissing) throw invalidArgument(`the database in ${this.dir} does not exist (createIfMissing is false)`);
    if (exists && options.errorIfExists) throw invalidArgument(`a database already exists in ${this.dir} (errorIfExists is true)`);
    checkRouter(fs, this.dir, this.router, exists);
    for (const r of this.regions) fs.mkdir(r.dir);
    if (!exists) {
      this.#versions.createNew();
      this.#info.log('created a new database');
    }
    this.#versions.recover((c) => this.#info.log(`dropped torn MANIFEST tail at ${c.file}:${c.offset} (${c.bytes} bytes): ${c.reason}`));

    // WALs at or after the MANIFEST's log number hold writes not yet in tables: replay them.
    const versions = this.#versions;
    const logs = this.#liveLogs(versions, true);
    // Only the newest WAL holding any bytes may end torn: newer empty ones are what a crash right
    // after creating a WAL leaves (at open or at a memtable switch, the older one synced first).
    const sizes = new Map(logs.map((n) => [n, fs.size(logFileName(this.dir, n))]));
    let newest = -1;
    for (const number of logs) if (sizes.get(number)! > 0) newest = number;
    const edit = new VersionEdit();
    const replayLimit = REPLAY_LIMIT_WRITE_BUFFERS * options.writeBufferSize;
    const image = this.#adoptMemTableImage(logs, sizes, replayLimit);
    const manifestSequence = versions.lastSequence;
    let replayedSequence = image.lastSequence;
    const damagedLogs: number[] = [];
    let tornBytes = 0;
    let flushedDuringReplay = false;
    const run = this.#replayRun();
    // What one run holds before it goes into the memtable is bounded by the replay limit.
    let walBytes = 0;
    for (const [number, size] of sizes) if (!image.wals.has(number)) walBytes += size;
    run?.reserve(Math.min(walBytes, replayLimit));
    // The image stands for its WALs' batches: the first batch replayed after them must follow its
    // last sequence, as it would have to follow theirs replayed.
    const chain: SequenceChain = { next: image.lastSequence > 0 ? image.lastSequence + 1 : -1 };
    for (const number of logs) {
      if (image.wals.has(number)) continue;
      const replay = replayWal(fs, logFileName(this.dir, number), {
        newest: number === newest,
        paranoid: options.paranoidChecks,
        info: this.#info,
        chain,
        apply: (record, sequence, entries) => {
          if (run !== null) {
            run.addBatch(record, entries, sequence);
            if (this.#memoryUsage() + run.nodeBytes < replayLimit) return;
            this.#drainRun(run, true);
          } else {
            this.#applyBatch(record, sequence);
          }
          if (this.#memoryUsage() >= replayLimit) {
            this.#flushAllInto(edit, true);
            flushedDuringReplay = true;
          }
        },
      });
      replayedSequence = Math.max(replayedSequence, replay.maxSequence);
      this.stats.walRecordsSkipped += replay.skippedRecords;
      this.stats.walBytesSkipped += replay.skippedBytes;
      this.stats.walTornBytes += replay.tornBytes;
      tornBytes += replay.tornBytes;
      if (replay.skippedRecords > 0) damagedLogs.push(number);
    }
    if (run !== null) this.#drainRun(run, true);
    versions.lastSequence = Math.max(manifestSequence, replayedSequence);
    const replayed = this.regions.some((r) => r.mem.count > 0);
    const inBackground =
      replayed && mayFlushReplayInBackground({
        flushedDuringReplay,
        tornBytes,
        damagedWals: damagedLogs.length,
        prevLogNumber: versions.prevLogNumber,
        sequenceAhead: manifestSequence > replayedSequence,
      });
    // The WALs a background flush leaves live must hold what readers will see through a crash, as
    // the table LevelDB writes here would: a process killed after unsynced writes leaves them in
    // the page cache only. Those the memtable image stands for need no sync if the close that
    // wrote it had synced them (it says so), as they are unchanged since.
    const held = inBackground ? logs.filter((n) => sizes.get(n)! > 0) : [];
    for (const number of held) if (!(image.walsSynced && image.wals.has(number))) syncFile(fs, logFileName(this.dir, number));
    // Otherwise what the WALs held goes to level 0 now, as LevelDB does. Either way a fresh WAL
    // takes writes.
    if (!inBackground) this.#flushAllInto(edit, true);
    this.#logNumber = versions.newFileNumber();
    this.#log = new LogWriter(fs.createWritable(logFileName(this.dir, this.#logNumber)));
    fs.syncDir(this.dir);
    edit.logNumber = held[0] ?? this.#logNumber;
    edit.prevLogNumber = 0;
    versions.logAndApply(edit);
    // A WAL whose damage was skipped is kept for a person to look at, not deleted as obsolete.
    for (const number of damagedLogs) {
      const name = logFileName('', number);
      try {
        moveToLost(fs, this.dir, name);
        this.#info.log(`moved damaged WAL ${name} to ${LOST_DIR}/`);
      } catch (err) {
        this.#info.log(`could not move damaged WAL ${name} to ${LOST_DIR}/: ${(err as Error).message}`);
      }
    }
    if (inBackground) {
      // Empty WALs between the held ones hold nothing: without this, every open that closes before
      // its flush installs would leave one more.
      for (const number of logs) {
        if (sizes.get(number) !== 0 || number < edit.logNumber) continue;
        try {
          fs.remove(logFileName(this.dir, number));
        } catch (err) {
          this.#info.log(`could not delete empty WAL ${number}: ${(err as Error).message}`);
        }
      }
      // The state after a memtable switch: the replayed memtables are flushed in the background,
      // read meanwhile as `imm`; the install moves the log number to the fresh WAL. An image of
      // two memtables is that state already: its live memtable stays live, and holds the WALs
      // from its own on (the install moves the log number to the first of them).
      if (image.resumedFrom === 0) for (const region of this.regions) region.switchMemTable();
    }
    this.#memLogStart = image.resumedFrom || this.#logNumber;
    if (image.unused) this.#removeQuietly(join(this.dir, MEMTABLE_IMAGE_FILE));
    this.#deleteObsoleteFiles(true);
    this.#bg.scheduleCompaction();
    if (inBackground) this.#bg.holdFlush(this.#memLogStart);
    // Memtables holding the image's entries that kept its Bloom filter through the replay.
    const { imm, mem } = this.regions[0]!;
    const filtersKept = [imm, mem].filter((m) => m !== null && m.count > 0 && m.completeFilter !== null).length;
    this.#info.log(
      `opened: last sequence ${versions.lastSequence}, WAL ${this.#logNumber}, ${logs.length - image.wals.size} WAL(s) replayed` +
        (image.wals.size > 0 ? `, ${image.wals.size} read from the memtable image (${filtersKept} Bloom filter(s) with it)` : '') +
        (inBackground ? `, their memtable flushed in the background (WALs ${held.join(', ')} live until then)` : ''),
    );
  }

  // ---------------------------------------------------------------------------------------------
  // Read-only open and refresh (RocksDB's secondary instance)

  /**
   * Opens the existing database in `dir` for reading only: no lock, and nothing written — no
   * directory, LOG, WAL, MANIFEST, table or lock file, no flush, no compaction. A writer may hold
   * the database open meanwhile; this reads the state on disk now (#loadReadOnly).
   */
  static #openReadOnly(dir: string, options: ResolvedOptions, router: RegionRouter): DBImpl {
    const fs = options.fs;
    const db = new DBImpl(dir, options, router, NO_LOCK, new SilentInfoLog(fs, dir));
    try {
      if (!fs.exists(currentFileName(dir))) {
        if (fs.exists(dir)) checkNoDatabaseLeft(fs, dir, db.regions.map((r) => r.dir));
        throw invalidArgument(`the database in ${dir} does not exist (a read-only open creates nothing)`);
      }
      checkRouter(fs, dir, router, true);
      db.#loadReadOnly();
      return db;
    } catch (err) {
      db.#closeFiles();
      throw err;
    }
  }

  /**
   * Read-only: catches up with the writer — the tables its MANIFEST names now and the WALs it
   * holds live, replayed into fresh memtables. Iterators already open keep reading the state
   * they were opened on. Snapshots could not (the writer's compaction does not keep what they
   * see), so `refresh()` with a snapshot held is INVALID_ARGUMENT.
   */
  refresh(): void {
    if (this.#closed) throw new SieveError(ErrorCode.CLOSED, 'the database is closed');
    if (!this.readOnly) throw notSupported('refresh() is for a database opened with readOnly: true; this one is always current');
    if (this.snapshots.size > 0) {
      throw invalidArgument(`refresh() with ${this.snapshots.size} snapshot(s) held: release them first (they read the state refresh() replaces)`);
    }
    this.#loadReadOnly();
  }

  /**
   * Loads the state on disk into this (read-only) database: a fresh VersionSet recovered from
   * CURRENT's MANIFEST (a torn tail of a MANIFEST being appended is what a crash leaves, and
   * tolerated), and every WAL at or after its log number replayed into fresh memtables (the
   * newest may end torn: the writer is appending to it). Nothing is written or flushed, however
   * large the WALs. A writer that moves on meanwhile (an edit logged, a WAL or table deleted, a
   * new MANIFEST) changes `writerStamp`; then the load starts over, up to READ_ONLY_LOAD_ATTEMPTS
   * times. Until a load succeeds the database keeps its previous state.
   */
  #loadReadOnly(): void {
    const fs = this.fs;
    for (let attempt = 1; ; attempt++) {
      const stamp = writerStamp(fs, this.dir);
      const saved = this.regions.map((r) => ({ mem: r.mem, imm: r.imm }));
      try {
        const versions = this.#readOnlyState();
        // Every table of the state is opened now, while the writer has not moved: one it deletes
        // later stays readable through its handle (up to maxOpenFiles tables; beyond, a table
        // reopened after the writer deleted it is IO_ERROR, never a wrong value). A table already
        // gone means the writer moved: read again.
        for (let r = 0; r < this.regions.length; r++) {
          for (let level = 0; level < NUM_LEVELS; level++) {
            for (const f of versions.current.files(r, level)) this.tables[r]!.cache.findTable(f.number, f.fileSize);
          }
        }
        if (writerStamp(fs, this.dir) !== stamp) throw new WriterMoved();
        const old = this.#versions;
        this.iteratorTrees.drop(); // it reads the old state
        this.#versions = versions;
        versions.onInstall = this.#dropKeptTree;
        // Tables the new state no longer names: their handles go (iterators keep theirs).
        const live = versions.liveFiles();
        for (const n of old.current.fileNumbers()) if (!live.has(n)) for (const t of this.tables) t.evict(n);
        old.close();
        // The memtables replaced: their arenas go back once no iterator reads them.
        for (const s of saved) {
          s.imm?.retire();
          s.mem.retire();
        }
        return;
      } catch (err) {
        for (const region of this.regions) {
          if (!saved.some((s) => s.mem === region.mem)) region.mem.retire();
          if (region.imm !== null && !saved.some((s) => s.imm === region.imm)) region.imm.retire();
        }
        saved.forEach((s, i) => {
          this.regions[i]!.mem = s.mem;
          this.regions[i]!.imm = s.imm;
        });
        const moved = err instanceof WriterMoved || writerStamp(fs, this.dir) !== stamp;
        if (!moved) throw err;
        if (attempt === READ_ONLY_LOAD_ATTEMPTS) {
          throw ioError(`the database in ${this.dir} changed under each of ${attempt} attempts to read it: its writer is too busy`, {
            cause: err instanceof WriterMoved ? undefined : err,
          });
        }
      }
    }
  }

  /**
   * Recovery: reads the memtable image (db/memtable-image.ts) if the WALs it holds are the first
   * live non-empty WALs as they are now, and returns their numbers (for the replay to skip) and
   * its newest sequence. Its first memtable becomes region 0's memtable, which the replay of any
   * later WAL goes on from. When its two memtables (one a close abandoned the flush of, then the
   * live one) hold every non-empty WAL, the open resumes that state instead: the first as `imm`,
   * to be flushed, the second as `mem`, holding the WALs from `resumedFrom` on. An image that
   * does not match is `unused`: the replay does the work, and the open removes the image once it
   * has succeeded (a failed open changes nothing). So is one larger than the replay's memory
   * limit (a larger write buffer wrote it), which a replay would flush in parts. A temporary one
   * a close left half-written is removed.
   */
  #adoptMemTableImage(
    logs: readonly number[],
    sizes: ReadonlyMap<number, number>,
    limit: number,
  ): { wals: Set<number>; lastSequence: number; resumedFrom: number; unused: boolean; walsSynced: boolean } {
    const fs = this.fs;
    const path = join(this.dir, MEMTABLE_IMAGE_FILE);
    if (fs.exists(join(this.dir, MEMTABLE_IMAGE_TEMP))) this.#removeQuietly(join(this.dir, MEMTABLE_IMAGE_TEMP));
    if (!fs.exists(path)) return { wals: new Set(), lastSequence: 0, resumedFrom: 0, unused: false, walsSynced: false };
    const arenas = this.arenas;
    // The arenas the image is read into, and how much of each it wrote: those not kept go back.
    const taken: { buffer: ListBuffer; used: number }[] = [];
    const arena = (used: number): ListBuffer => {
      const buffer = used <= arenas.arenaBytes ? arenas.takeZeroedFrom(used) : new ArrayBuffer(used);
      taken.push({ buffer, used });
      return buffer;
    };
    let why: string;
    try {
      const image =
        this.regions.length !== 1 ? 'the database has several regions'
        : fs.size(path) > limit ? `larger than the replay's limit of ${limit} bytes`
        : readMemTableImage(fs, path, arena);
      const nonEmpty = logs.filter((n) => sizes.get(n)! > 0);
      why = typeof image === 'string' ? image : this.#imageMismatch(image[0]!.wals, nonEmpty, 0, sizes);
      if (typeof image !== 'string' && why === '') {
        const [first, second] = image as [ImagePart, ImagePart | undefined];
        const resume =
          second !== undefined &&
          first.wals.length + second.wals.length === nonEmpty.length &&
          this.#versions.prevLogNumber === 0 &&
          this.#imageMismatch(second.wals, nonEmpty, first.wals.length, sizes) === '';
        const used = resume ? [first, second] : [first];
        // Both built before the region changes: a throw here leaves it as it was. Each takes the
        // Bloom filter its part saved; one saved without (or of another size) is deferred:
        // filled only if reads come before the flush (one part: the open flushes it as if
        // replayed, #drainRun) or while the resumed live one takes writes.
        const flushing = resume ? this.#newMemTable({ ...first, deferBloom: true }) : null;
        const live = this.#newMemTable({ ...(resume ? second : first), deferBloom: true });
        const region = this.regions[0]!;
        region.mem.retire();
        region.imm = flushing;
        region.mem = live;
        for (const t of taken) if (!used.some((p) => p.state.list.buffer === t.buffer)) arenas.give(t.buffer, t.used);
        this.#imageWal = first.wals[0]!.number;
        const wals = new Set(used.flatMap((p) => p.wals.map((w) => w.number)));
        const lastSequence = Math.max(...used.map((p) => p.state.maxSequence));
        return { wals, lastSequence, resumedFrom: resume ? second.wals[0]!.number : 0, unused: false, walsSynced: first.walsSynced };
      }
    } catch (err) {
      why = (err as Error).message;
    }
    for (const t of taken) arenas.give(t.buffer, t.used);
    this.#info.log(`memtable image not used (${why}): the WALs are replayed`);
    return { wals: new Set(), lastSequence: 0, resumedFrom: 0, unused: true, walsSynced: false };
  }

  /**
   * Why `wals` are not `nonEmpty[from…]` as they are now ('' if they are). `sizes` (the open's
   * reading) rules out a WAL of another length before its bytes are read for their CRC.
   */
  #imageMismatch(wals: readonly WalStamp[], nonEmpty: readonly number[], from: number, sizes: ReadonlyMap<number, number>): string {
    for (let i = 0; i < wals.length; i++) {
      const want = wals[i]!;
      const have = nonEmpty[from + i];
      if (have !== want.number) return `it holds WAL ${want.number} where the live WALs have ${have ?? 'none'}`;
      const length = sizes.get(want.number)!;
      if (length !== want.length) return `WAL ${want.number} is ${length} bytes, was ${want.length}`;
      if (stampWal(this.fs, this.dir, want.number).crc !== want.crc) return `WAL ${want.number}'s bytes changed`;
    }
    return '';
  }

  /**
   * A fresh memtable, or one over `from.state` (a memtable image's part), with the options' Bloom
   * filter: the one saved with the part (`from.filter`) if it has the options' size, else one
   * deferred if `from.deferBloom` (see MemTableOptions).
   */
  #newMemTable(from: { state?: { list: SkipListState; maxSequence: number }; filter?: Uint32Array | undefined; deferBloom?: boolean } = {}): MemTable {
    const { state, filter, deferBloom = false } = from;
    return new MemTable({ bloomBits: this.#memTableBloomBits, pool: this.arenas, state, deferBloom, ...(filter !== undefined ? { bloom: filter } : {}) });
  }

  #removeQuietly(path: string): void {
    try {
      this.fs.remove(path);
    } catch (err) {
      this.#info.log(`could not delete ${path}: ${(err as Error).message}`);
    }
  }

  /**
   * The WALs `versions` calls live (at or after its log number, or its previous one), ascending,
   * from a listing of the directories; with `markUsed` (a writable open) every file number seen is
   * marked used. CORRUPTION if a table the MANIFEST names is missing, or the live WAL is: that WAL
   * is created (and its name synced) before any edit names it, and deleted only after a later edit
   * moves past it, so missing, it means an edit was lost (a MANIFEST cut short after its WAL was
   * deleted, say), and with it the writes of that WAL.
   */
  #liveLogs(versions: VersionSet, markUsed: boolean): number[] {
    const fs = this.fs;
    const logs: number[] = [];
    const expected = new Set(versions.liveFiles());
    for (const r of this.regions) {
      if (r.index !== 0 && !fs.exists(r.dir)) continue;
      for (const name of fs.list(r.dir)) {
        const parsed = parseFileName(name);
        if (parsed === undefined) continue;
        if (markUsed) versions.markFileNumberUsed(parsed.number);
        if (parsed.type === FileType.TABLE) expected.delete(parsed.number);
        if (r.index === 0 && parsed.type === FileType.LOG && versions.isLiveLog(parsed.number)) {
          logs.push(parsed.number);
        }
      }
    }
    if (expected.size > 0) {
      throw new SieveError(ErrorCode.CORRUPTION, `${expected.size} table file(s) named by the MANIFEST are missing: ${[...expected].slice(0, 5).join(', ')}`, {
        file: this.dir,
      });
    }
    if (versions.logNumber > 0 && !logs.includes(versions.logNumber)) {
      throw new SieveError(ErrorCode.CORRUPTION, `the MANIFEST names WAL ${versions.logNumber} as live, but it is missing`, {
        file: logFileName(this.dir, versions.logNumber),
      });
    }
    return logs.sort((a, b) => a - b);
  }

  /** One attempt of #loadReadOnly: the new VersionSet; the regions get memtables of the WALs. */
  #readOnlyState(): VersionSet {
    const fs = this.fs;
    const versions = new VersionSet(this.dir, fs, this.regions.length);
    versions.recover();
    const logs = this.#liveLogs(versions, false);
    const sizes = logs.map((n) => fs.size(logFileName(this.dir, n)));
    let newest = -1;
    logs.forEach((n, i) => {
      if (sizes[i]! > 0) newest = n;
    });
    for (const region of this.regions) {
      region.switchMemTable();
      region.imm = null;
    }
    let maxSequence = versions.lastSequence;
    const run = this.#replayRun();
    run?.reserve(sizes.reduce((sum, size) => sum + size, 0));
    const chain: SequenceChain = { next: -1 };
    for (const number of logs) {
      const replay = replayWal(fs, logFileName(this.dir, number), {
        newest: number === newest,
        paranoid: this.options.paranoidChecks,
        info: this.#info,
        chain,
        apply: (record, sequence, entries) => {
          if (run !== null) run.addBatch(record, entries, sequence);
          else this.#applyBatch(record, sequence);
        },
      });
      maxSequence = Math.max(maxSequence, replay.maxSequence);
      this.stats.walRecordsSkipped += replay.skippedRecords;
      this.stats.walBytesSkipped += replay.skippedBytes;
      this.stats.walTornBytes += replay.tornBytes;
    }
    if (run !== null) this.#drainRun(run, false);
    versions.lastSequence = maxSequence;
    return versions;
  }

  /**
   * Where a replay gathers its batches for one sorted insert (MemTable.addRun), or null with
   * several regions, whose batches are split by key as they are applied.
   */
  #replayRun(): EntryRun | null {
    return this.regions.length === 1 ? new EntryRun() : null;
  }

  /**
   * Moves what a replay gathered into the (one) memtable. `flushing`: the memtable is flushed
   * before the open returns or in the background right after, so its Bloom filter is deferred
   * (filling it costs about a fifth of the load; reads before the flush ends fill it if many),
   * unless the memtable holds a memtable image's entries with the filter saved beside them: that
   * one is kept, and takes the replayed keys too.
   */
  #drainRun(run: EntryRun, flushing: boolean): void {
    const mem = this.regions[0]!.mem;
    const adopted = mem.count > 0 && mem.completeFilter !== null;
    if (flushing && run.count > 0 && !adopted) mem.deferBloom();
    mem.addRun(run);
    run.clear();
  }

  // ---------------------------------------------------------------------------------------------
  // Write path

  #checkWritable(): void {
    if (this.#closed) throw new SieveError(ErrorCode.CLOSED, 'the database is closed');
    if (this.readOnly) throw notSupported('the database is open read-only (readOnly: true): it takes no writes');
    if (this.#bgError !== null) throw this.#bgError;
  }

  /** Reused by #applyBatch: the entries of the batch being applied, as offsets. */
  readonly #entries = new BatchEntries();

  /** Applies an encoded batch (sequence `seq` for its first entry) to the regions' memtables. */
  #applyBatch(rep: Uint8Array, seq: number): void {
    const regions = this.regions;
    const router = this.router;
    if (regions.length === 1) {
      // One region: the batch goes in whole, in key order (MemTable.addEntries).
      this.#entries.decode(rep);
      regions[0]!.mem.addEntries(rep, this.#entries, seq);
      return;
    }
    let s = seq;
    forEachBatchEntry(rep, (type, key, value) => {
      regions[router.regionOf(key)]!.mem.add(s++, type, key, value);
    });
  }

  // Every write commits at once when the queue is idle (nothing queued or in flight) and nothing
  // makes it wait; otherwise it joins the writer queue (write-queue.ts): an async write awaits its
  // turn, a sync twin runs the queue itself, blocking, up to its own write.

  /** Commits `batch`; resolves when it is visible (and durable, if `sync`). */
  write(batch: WriteBatch, sync: boolean): Promise<void> {
    try {
      this.#checkWritable();
      this.#checkBatch(batch);
      if (!sync && this.#idle()) {
        this.#commit(batch, false, true);
        return RESOLVED;
      }
    } catch (err) {
      return Promise.reject(err);
    }
    return this.#queue.enqueue(batch, sync);
  }

  /**
   * The synchronous twin of `write`: commits `batch` now, after every write issued before it (their
   * fdatasync, if one is in flight, is finished here, blocking), so writes apply in call order.
   */
  writeSync(batch: WriteBatch, sync: boolean): void {
    this.#checkWritable();
    this.#checkBatch(batch);
    this.#slowdownSync();
    this.#writeSyncNow(batch, sync);
  }

  /** `writeSync` after its checks and slowdown. */
  #writeSyncNow(batch: WriteBatch, sync: boolean): void {
    if (this.#idle()) {
      this.#commit(batch, sync, true);
      return;
    }
    this.#queue.runUntil(batch, sync);
  }

  /**
   * One put (`type` VALUE) or delete through the async API: with the queue idle and unsynced it
   * commits at once, encoded in a reused batch (no WriteBatch per call); otherwise it joins the
   * queue as a batch of one.
   */
  writeOne(type: ValueType, key: Uint8Array, value: Uint8Array, sync: boolean): Promise<void> {
    if (!sync && this.#closed === false && !this.readOnly && this.#bgError === null && this.#idle()) {
      try {
        this.#commitOne(type, key, value, false);
        return RESOLVED;
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return this.write(batchOfOne(new WriteBatch(), type, key, value), sync);
  }

  /** The synchronous twin of `writeOne`. */
  writeOneSync(type: ValueType, key: Uint8Array, value: Uint8Array, sync: boolean): void {
    this.#checkWritable();
    this.#slowdownSync();
    if (this.#idle()) {
      this.#commitOne(type, key, value, sync);
      return;
    }
    const batch = batchOfOne(new WriteBatch(), type, key, value);
    this.#checkBatch(batch);
    this.#writeSyncNow(batch, sync);
  }

  /** stats.bytesWritten when a write last installed finished background jobs (#makeRoomForWrite). */
  #polledAtBytes = 0;

  /** Bytes written at l0SlowdownTrigger since the last 1 ms slowdown (0 below the trigger). */
  #slowdownBytes = 0;

  /**
   * Counts a committed write's bytes toward the next slowdown. LevelDB sleeps 1 ms per write
   * group at l0SlowdownTrigger; writers here sleep 1 ms per SLOWDOWN_BYTES written there instead
   * (an async group in #waitForRoom, a sync write in #slowdownSync): a sync write is a group of
   * its own, and a 1 ms sleep per putSync would cap single puts at 1,000/s, while a batch of
   * 1,000 db_bench entries sleeps about twice, as in LevelDB.
   */
  #countSlowdown(bytes: number): void {
    if (this.#l0Files() >= this.options.l0SlowdownTrigger) this.#slowdownBytes += bytes;
    else this.#slowdownBytes = 0;
  }

  /** True if level 0 is at the slowdown trigger and enough was written there for a sleep. */
  #slowdownDue(): boolean {
    return this.#slowdownBytes >= SLOWDOWN_BYTES && this.#l0Files() >= this.options.l0SlowdownTrigger;
  }

  /**
   * The synchronous twin of #waitForRoom's slowdown: a blocking 1 ms sleep, so the core goes to
   * the compaction that will take level 0 down instead of writers running into l0StopTrigger and
   * waiting out whole merges.
   */
  #slowdownSync(): void {
    if (!this.#slowdownDue() || this.#bgError !== null) return;
    this.#slowdownBytes = 0;
    const since = performance.now();
    Atomics.wait(SLEEP_CELL, 0, 0, 1);
    this.stats.stalls.add('l0Slowdown', since);
  }

  /** True if a write may commit at once: nothing queued or in flight, no reason to wait. */
  #idle(): boolean {
    return this.#queue.idle && !this.#mustWait();
  }

  /**
   * `#commit` of one put or delete, without a WriteBatch per call and without decoding what was
   * just encoded: the WAL record is built in a reused batch and the entry goes straight into its
   * region's memtable.
   */
  #commitOne(type: ValueType, key: Uint8Array, value: Uint8Array, sync: boolean): void {
    const batch = this.#single;
    batch.clear();
    batchOfOne(batch, type, key, value);
    this.#checkBatch(batch);
    this.#makeRoomForWrite();
    const versions = this.#versions;
    const seq = versions.lastSequence + 1;
    batch.setSequence(seq);
    const rep = batch.contents();
    try {
      this.#log!.addRecord(rep);
      if (sync) this.#log!.sync();
    } catch (err) {
      throw this.#latch(err);
    }
    this.stats.writes++;
    this.stats.bytesWritten += rep.length;
    this.#countSlowdown(rep.length);
    const region = this.regions.length === 1 ? this.regions[0]! : this.regions[this.router.regionOf(key)]!;
    region.mem.add(seq, type, key, value);
    versions.lastSequence = seq;
  }

  /**
   * Refuses, before anything is written, a batch over `maxBatchSize` and (sharded) a key the
   * router sends to no region: a failure after the WAL append would leave half a batch applied.
   */
  #checkBatch(batch: WriteBatch): void {
    if (batch.byteLength > this.options.maxBatchSize) {
      throw invalidArgument(`a batch of ${batch.byteLength} bytes is over maxBatchSize (${this.options.maxBatchSize} bytes)`);
    }
    if (this.regions.length === 1) return;
    const router = this.router;
    const n = this.regions.length;
    forEachBatchEntry(batch.contents(), (_type, key) => {
      const r = router.regionOf(key);
      if (!Number.isInteger(r) || r < 0 || r >= n) {
        throw invalidArgument(`router ${JSON.stringify(router.name)} sent a key to region ${String(r)}; it has regions 0..${n - 1}`);
      }
    });
  }

  /**
   * Assigns sequence numbers and appends the WAL record (with a blocking fdatasync if `sync`); if
   * `apply`, also inserts it into the memtables and makes it visible. A WAL failure is latched.
   * An empty batch takes no sequence numbers.
   */
  #commit(batch: WriteBatch, sync: boolean, apply: boolean): void {
    const count = batch.count;
    if (count === 0) return;
    this.#makeRoomForWrite();
    const seq = this.#versions.lastSequence + 1;
    batch.setSequence(seq);
    const rep = batch.contents();
    try {
      this.#log!.addRecord(rep);
      if (sync) this.#log!.sync();
    } catch (err) {
      throw this.#latch(err);
    }
    this.stats.writes += count;
    this.stats.bytesWritten += rep.length;
    this.#countSlowdown(rep.length);
    if (apply) this.#publish(batch);
  }

  /** Inserts a batch whose WAL record is written into the memtables, then advances lastSequence. */
  #publish(batch: WriteBatch): void {
    const count = batch.count;
    if (count === 0) return;
    const seq = batch.sequence;
    this.#applyBatch(batch.contents(), seq);
    this.#versions.lastSequence = seq + count - 1;
  }

  #memoryUsage(): number {
    let sum = 0;
    for (const r of this.regions) sum += r.mem.approximateMemoryUsage;
    return sum;
  }

  #l0Files(): number {
    const v = this.#versions.current;
    let most = 0;
    for (let r = 0; r < this.regions.length; r++) most = Math.max(most, v.numFiles(r, 0));
    return most;
  }

  /** True if the memtables are full (or, when `force`d, not empty). */
  #roomNeeded(force: boolean): boolean {
    return force ? this.regions.some((r) => r.mem.count > 0) : this.#memoryUsage() >= this.options.writeBufferSize;
  }

  /** True if a write must wait before it commits: a flush blocks the switch, or level 0 is too deep. */
  #mustWait(): boolean {
    return (this.#roomNeeded(false) && this.#bg.flushing) || this.#l0Files() >= this.options.l0StopTrigger || this.#slowdownDue();
  }

  /**
   * Waits (without blocking the thread) until the next write can commit: a full memtable waits for
   * the running flush (a flush still held for a worker that is starting runs on this thread at
   * once, blocking it: BackgroundWork.expediteFlush); at l0StopTrigger level-0 files writes wait
   * until compaction takes level 0 below it (starting a merge if none runs); from
   * l0SlowdownTrigger a group is delayed 1 ms per SLOWDOWN_BYTES written there, to let compaction
   * catch up (#countSlowdown).
   */
  async #waitForRoom(): Promise<void> {
    const stalls = this.stats.stalls;
    let since = performance.now();
    if (this.#roomNeeded(false) && this.#bg.flushing) {
      try {
        this.#syncFullLog();
      } catch {
        // Latched: the write that needed room fails with it.
      }
      this.#bg.expediteFlush();
      await this.#bg.whenFlushed();
      since = stalls.add('memtableFull', since);
    }
    while (this.#l0Files() >= this.options.l0StopTrigger && this.#bgError === null && this.#bg.startCompactionForStall()) {
      await this.#bg.whenProgress();
      since = stalls.add('l0Stop', since);
    }
    if (this.#slowdownDue() && this.#bgError === null) {
      this.#slowdownBytes = 0;
      await new Promise((resolve) => setTimeout(resolve, 1));
      stalls.add('l0Slowdown', since);
    }
  }

  /**
   * Makes room for a write now: when the memtables are full (or `force`d and not empty), waits
   * (blocking) for a running flush, then switches to fresh memtables and a fresh WAL and starts
   * flushing the full ones in the background. At l0StopTrigger level-0 files it also blocks until
   * compaction takes level 0 below it, merge after merge (starting one if none runs) — only
   * synchronous writers get here with a full level 0; asynchronous ones waited in #waitForRoom.
   */
  #makeRoomForWrite(force = false): void {
    if (this.stats.bytesWritten - this.#polledAtBytes >= POLL_BYTES) {
      this.#polledAtBytes = this.stats.bytesWritten;
      this.#bg.pollSync();
      // Writes have begun: the flush worker starts now, not when the first flush needs it.
      this.#bg.prestart();
    }
    if (!this.#roomNeeded(force)) return;
    const stalls = this.stats.stalls;
    let since = performance.now();
    if (this.#bg.flushing) {
      this.#syncFullLog();
      this.#bg.waitFlushSync();
      since = stalls.add('memtableFull', since);
    }
    while (this.#l0Files() >= this.options.l0StopTrigger && this.#bgError === null && this.#bg.startCompactionForStall()) {
      this.#syncFullLog();
      this.#bg.waitCompactionSync();
      since = stalls.add('l0Stop', since);
    }
    if (this.#bgError !== null) throw this.#bgError;
    if (!this.#roomNeeded(force)) return;
    const fs = this.fs;
    const number = this.#versions.newFileNumber();
    let log: LogWriter;
    try {
      // The old WAL is synced before writes move on: its memtable is flushed in the background,
      // and a later synced write syncs only the new WAL. Without this a crash could keep that
      // write and lose earlier ones (RocksDB syncs older WALs on a synced write for the same reason).
      // Usually done already, while the writer waited for the previous flush (#syncFullLog).
      if (this.#log?.unsynced) this.#log.sync();
      log = new LogWriter(fs.createWritable(logFileName(this.dir, number)));
      fs.syncDir(this.dir);
    } catch (err) {
      throw this.#latch(err);
    }
    const old = this.#log;
    this.#log = log;
    this.#logNumber = number;
    this.#memLogStart = number;
    try {
      old?.close();
    } catch {
      // Its records are synced; a close error changes nothing.
    }
    for (const region of this.regions) region.switchMemTable();
    this.#bg.startFlush(number);
  }

  /**
   * Recovery only: writes every region's live memtable (what the WALs replayed) to a level-0
   * table recorded in `edit`, synchronously, and gives the region a fresh memtable. Empty
   * memtables write nothing.
   */
  #flushAllInto(edit: VersionEdit, _recovering: true): void {
    for (const region of this.regions) {
      const mem = region.mem;
      if (mem.count === 0) continue;
      const number = this.#versions.newFileNumber();
      const meta = flushMemTable(this.fs, region.dir, number, mem.iterator(), this.#bg.shape);
      edit.addFile(0, meta, region.index);
      this.stats.flushes++;
      this.stats.bytesFlushed += meta.fileSize;
      this.#info.log(`flushed region ${region.index} memtable (${mem.count} entries) to table ${number} (${meta.fileSize} bytes)`);
      region.switchMemTable();
      region.imm = null;
      mem.retire();
    }
  }

  /**
   * Syncs the WAL of the full memtable while the writer waits for room anyway (for a flush, or at
   * the level-0 stop): the switch that follows must sync it, and then finds it done, so the
   * fdatasync overlaps the background work instead of delaying the next flush's start. A failure
   * is latched, as at the switch.
   */
  #syncFullLog(): void {
    if (this.#log === null || !this.#log.unsynced) return;
    try {
      this.#log.sync();
    } catch (err) {
      throw this.#latch(err);
    }
  }

  /**
   * Removes an obsolete file, off this thread where the file system can (an unlink of a 4 MiB WAL
   * or a merge's input tables takes a millisecond or more); close waits for what is under way. A
   * failure is logged: the next open removes what is left.
   */
  #removeObsolete(path: string): void {
    if (this.#removals.has(path)) return;
    this.#removals.set(
      path,
      removeOffThread(this.fs, path).then(
        () => void this.#removals.delete(path),
        (err: unknown) => {
          this.#removals.delete(path);
          this.#info.log(`could not delete ${path}: ${(err as Error).message}`); // a no-op once closed
        },
      ),
    );
  }

  /** Resolves once the obsolete files being removed now are (failures are logged, not thrown). */
  async #removalsSettled(): Promise<void> {
    await Promise.all(this.#removals.values());
  }

  #latch(err: unknown): SieveError {
    const e = isSieveError(err) ? err : ioError('background write failed', { cause: err });
    if (this.#bgError === null) {
      this.#bgError = e;
      this.#info.log(`background error latched: ${e.message}`);
    }
    return e;
  }

  /**
   * Deletes WALs, MANIFESTs and tables no longer needed: never a table a live version names or a
   * job is writing. Nothing at all after a background error: a failed MANIFEST write may or may
   * not have reached the disk, so what is live on disk is unknown (as LevelDB's
   * RemoveObsoleteFiles, which stops on bg_error). `now` (at open): removed before this returns,
   * so an open leaves the directory as it will stay; otherwise off this thread (#removeObsolete).
   */
  #deleteObsoleteFiles(now = false): void {
    if (this.#bgError !== null) return;
    const versions = this.#versions;
    if (this.#imageWal !== 0 && !versions.isLiveLog(this.#imageWal)) {
      this.#removeQuietly(join(this.dir, MEMTABLE_IMAGE_FILE));
      this.#imageWal = 0;
    }
    const live = versions.liveFiles();
    const fs = this.fs;
    const dirs = this.regions.map((r) => r.dir);
    for (const dir of new Set(dirs)) {
      let names: string[];
      try {
        names = fs.list(dir);
      } catch (err) {
        if (isNotFound(err)) continue;
        throw err;
      }
      for (const name of names) {
        const parsed = parseFileName(name);
        if (parsed === undefined) continue;
        let keep = true;
        switch (parsed.type) {
          case FileType.LOG:
            keep = dir === this.dir && versions.isLiveLog(parsed.number);
            break;
          case FileType.DESCRIPTOR:
            keep = dir === this.dir && parsed.number >= versions.manifestFileNumber;
            break;
          case FileType.TABLE:
            keep = live.has(parsed.number) || this.#bg.pendingOutputs.has(parsed.number);
            break;
          case FileType.TEMP:
            keep = false;
            break;
          default:
            keep = true;
        }
        if (keep) continue;
        if (parsed.type === FileType.TABLE) {
          for (const t of this.tables) t.evict(parsed.number);
        }
        if (now) this.#removeQuietly(`${dir}/${name}`);
        else this.#removeObsolete(`${dir}/${name}`);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Read path

  /**
   * The value of `key` visible at `sequence` (default: the newest), or undefined. The returned
   * bytes are borrowed (a memtable's or a cached block's): copy before the next database call.
   */
  get(key: Uint8Array, sequence = this.#versions.lastSequence): Uint8Array | undefined {
    if (this.#closed) throw new SieveError(ErrorCode.CLOSED, 'the database is closed');
    const stats = this.stats;
    // A loop of getSync never yields: install finished flushes and merges now and then, so level 0
    // comes down (fewer tables per lookup) while it reads. Before anything is looked at.
    if ((++stats.gets & (POLL_GETS - 1)) === 0 && !this.readOnly) this.#bg.pollSync();
    const regionIndex = this.regions.length === 1 ? 0 : this.router.regionOf(key);
    stats.regionGets[regionIndex]!++;
    const region = this.regions[regionIndex]!;
    let r = region.mem.get(key, sequence);
    if (r === Lookup.FOUND) return region.mem.foundValue;
    if (r === Lookup.DELETED) return undefined;
    const imm = region.imm;
    if (imm !== null) {
      r = imm.get(key, sequence);
      if (r === Lookup.FOUND) return imm.foundValue;
      if (r === Lookup.DELETED) return undefined;
    }
    return this.tables[regionIndex]!.getFromVersion(this.#versions.current, regionIndex, key, sequence, this.#probes);
  }

  /** A snapshot of the newest state. */
  snapshot(): Snapshot {
    if (this.#closed) throw new SieveError(ErrorCode.CLOSED, 'the database is closed');
    return this.snapshots.create(this.#versions.lastSequence);
  }

  /** The current version, referenced: the caller must `unref()` it. */
  refCurrentVersion(): Version {
    return this.#versions.current.ref();
  }

  /** The current version (not referenced: compare, do not keep). */
  get currentVersion(): Version {
    return this.#versions.current;
  }

  /** A new version pins other files and memtables: a kept iterator tree reads the old ones. */
  readonly #dropKeptTree = (): void => {
    this.iteratorTrees.drop();
  };

  /**
   * For db/checkpoint.ts: commits every queued write (blocking, as `flush` does), then captures,
   * in the same turn, the files a copy of the database now consists of. Until the source is
   * released its tables stay on disk; releasing it deletes what became obsolete meanwhile.
   */
  checkpointSource(): CheckpointSource {
    if (this.#closed) throw new SieveError(ErrorCode.CLOSED, 'the database is closed');
    if (this.readOnly) throw notSupported('checkpoint() needs the database open for writing (its tables must stay while they are linked)');
    if (this.#bgError !== null) throw this.#bgError;
    this.#queue.runAll();
    if (this.#bgError !== null) throw this.#bgError;
    return captureCheckpointSource(this.fs, this.dir, this.#versions, this.regions.length, () => {
      if (!this.#closed) this.#deleteObsoleteFiles();
    });
  }

  /**
   * Flushes the memtables to level 0; resolves once their tables are installed and the WALs they
   * replace removed.
   */
  async flush(): Promise<void> {
    this.#checkWritable();
    this.#queue.runAll();
    this.#makeRoomForWrite(true);
    await this.#bg.whenFlushed();
    if (this.#bgError !== null) throw this.#bgError;
    await this.#removalsSettled();
  }

  /**
   * Flushes, then compacts the user-key range [begin, end] (undefined = unbounded) of every region
   * down to the deepest level holding data there, dropping what no reader can see. Resolves once
   * the files it made obsolete are removed.
   */
  async compactRange(begin: Uint8Array | undefined, end: Uint8Array | undefined): Promise<void> {
    await this.flush();
    await this.#bg.compactRange(begin, end);
    if (this.#bgError !== null) throw this.#bgError;
    await this.#removalsSettled();
  }

  /** Number of table files at `level` (summed over regions, or for one region). */
  numFilesAtLevel(level: number, region?: number): number {
    if (!Number.isInteger(level) || level < 0 || level >= NUM_LEVELS) throw invalidArgument(`level must be 0..${NUM_LEVELS - 1}`);
    const v = this.#versions.current;
    if (region !== undefined) return v.numFiles(region, level);
    let n = 0;
    for (let r = 0; r < this.regions.length; r++) n += v.numFiles(r, level);
    return n;
  }

  // ---------------------------------------------------------------------------------------------
  // Close

  /**
   * Waits for queued writes, then closes every file and releases the lock. Idempotent. A flush or
   * merge still running is abandoned, not waited for (LevelDB's shutting_down_): its WAL or its
   * inputs stay live, and the next open replays or redoes it.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#queue.whenDrained();
    this.#closed = true;
    this.openIterators.endAll();
    this.iteratorTrees.drop();
    // The memtable image is written while the workers stop: their answers come on this thread,
    // after it. A flush that finished instead of abandoning (past its last look at the stop flag)
    // and was installed moved the log number past the WALs of the memtable it flushed: the image
    // is written again, without that memtable.
    //
    // The live WAL is synced meanwhile, on the thread pool: every write is then durable once close
    // returns, and the image says so, which spares the next open that fdatasync (#recover). Older
    // live WALs were synced when writes moved past them (#makeRoomForWrite), at the open, or by
    // the close before it (its flagged image spared the open). The image claiming it is written
    // while the sync runs, and put in place only once the sync succeeded.
    const syncing = this.#syncLogAtClose();
    const stopping = this.#bg.close();
    const logNumber = this.#versions.logNumber;
    const written = this.#leaveMemTableImage({ walsSynced: true, place: false });
    const walsSynced = await syncing;
    if (written) {
      if (walsSynced) this.#placeMemTableImage();
      else this.#leaveMemTableImage({ walsSynced: false });
    }
    await stopping;
    if (this.#versions.logNumber !== logNumber) this.#leaveMemTableImage({ walsSynced });
    await this.#removalsSettled();
    this.#markClosed();
    this.#closeFiles();
    // Nothing reads the memtables now (iterators ended, the image written, no job running):
    // their arenas go to the next database opened (memtable/arena-pool.ts).
    for (const region of this.regions) {
      region.imm?.retire();
      region.mem.retire();
    }
    this.arenas.close();
    this.#lock.release();
  }

  /**
   * Close: fdatasyncs the live WAL on the thread pool, if it holds unsynced writes. True once
   * every live WAL is durable; a failure is logged, not thrown, and the image then claims nothing
   * (README says close's promise does not hold then).
   */
  async #syncLogAtClose(): Promise<boolean> {
    const log = this.#log;
    if (log === null || this.readOnly) return false;
    if (!log.unsynced) return true;
    try {
      await log.syncAsync();
      return true;
    } catch (err) {
      this.#info.log(`could not sync the WAL at close: ${(err as Error).message}`);
      return false;
    }
  }

  /**
   * Close: writes the memtable image (db/memtable-image.ts) — the memtable whose flush was
   * abandoned, if any, then the live one, each with the WALs it holds — so that the next open
   * reads it instead of replaying those WALs. Only for one region, no background error, and no
   * previous log number (an old LevelDB's). A failure costs the next open a replay, nothing else:
   * it is logged. True if an image was written (left in MEMTABLE.tmp with `place: false`).
   */
  #leaveMemTableImage(how: ImageWriteOptions): boolean {
    const versions = this.#versions;
    if (this.readOnly || this.regions.length !== 1 || this.#bgError !== null || versions.prevLogNumber !== 0) return false;
    const { imm, mem } = this.regions[0]!;
    const fs = this.fs;
    const path = join(this.dir, MEMTABLE_IMAGE_FILE);
    try {
      const stamps = this.#liveLogs(versions, false)
        .map((n) => stampWal(fs, this.dir, n))
        .filter((w) => w.length > 0);
      // The WALs before the live memtable's first hold the memtable being flushed.
      const parts: ImagePartSource[] = [];
      for (const [memtable, wals] of [
        [imm, stamps.filter((w) => w.number < this.#memLogStart)],
        [mem, stamps.filter((w) => w.number >= this.#memLogStart)],
      ] as const) {
        if (wals.length === 0) continue;
        // Records but no entries (empty batches), or more WALs than a reader takes: the image
        // cannot stand for those WALs, nor for any after them.
        if (memtable === null || memtable.count === 0 || wals.length > MAX_IMAGE_WALS) break;
        parts.push({ wals, view: memtable.storageView(), maxSequence: memtable.maxSequence, filter: memtable.completeFilter });
      }
      if (parts.length > 0) {
        writeMemTableImage(fs, this.dir, parts, how);
        this.#imageWal = parts[0]!.wals[0]!.number;
        return true;
      }
      if (fs.exists(path)) {
        fs.remove(path);
        this.#imageWal = 0;
      }
    } catch (err) {
      this.#info.log(`could not write the memtable image: ${(err as Error).message}`);
      if (fs.exists(join(this.dir, MEMTABLE_IMAGE_TEMP))) this.#removeQuietly(join(this.dir, MEMTABLE_IMAGE_TEMP));
    }
    return false;
  }

  /** Puts the image `#leaveMemTableImage({ place: false })` wrote in place; a failure is logged. */
  #placeMemTableImage(): void {
    try {
      placeMemTableImage(this.fs, this.dir);
    } catch (err) {
      this.#info.log(`could not write the memtable image: ${(err as Error).message}`);
      this.#removeQuietly(join(this.dir, MEMTABLE_IMAGE_TEMP));
    }
  }

  /**
   * The close mark (close-mark.ts), the info log's last line, after a close with no background
   * error: the next open may then skip looking for another program's lock.
   */
  #markClosed(): void {
    if (this.readOnly || this.#bgError !== null) return;
    const path = descriptorFileName(this.dir, this.#versions.manifestFileNumber);
    try {
      this.#info.log(closeMark(basename(path), this.fs.size(path)));
    } catch {
      // No mark: the next open looks for the lock.
    }
  }

  #closeFiles(): void {
    try {
      this.#log?.close();
    } catch {
      // Nothing more to do for a file we are abandoning.
    }
    this.#log = null;
    this.#versions.close();
    for (const t of this.tables) t.close();
    this.#info.close();
  }
}
