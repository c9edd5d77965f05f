/**
 * DB: the public face of a sievekv database. Converts and checks arguments at the boundary
 * (keys and values: Uint8Array, Buffer or UTF-8 string; anything else is INVALID_ARGUMENT before
 * anything is written), hands owned Buffers back, and offers each operation twice: the async
 * method every user gets, and a synchronous twin (`getSync`, `putSync`, …) that skips the promise
 * where a caller wants the speed. The engine itself is DBImpl (db/db-impl.ts).
 */
import { Buffer } from 'node:buffer';
import { SieveError, ErrorCode, invalidArgument } from './errors.js';
import { DBImpl } from './db/db-impl.js';
import { ChainedBatch } from './db/chained-batch.js';
import { Snapshot } from './db/snapshot.js';
import { toBytes } from './key-encoding.js';
import { resolveOptions, type Options } from './options.js';
import type { RegionRouter } from './shard/region-router.js';
import { WriteBatch } from './wal/write-batch.js';
import { ValueType } from './format/internal-key.js';

const EMPTY = new Uint8Array(0);
import { NUM_LEVELS } from './version/version-edit.js';
import { estimateNumKeys, levelSummary, regionFigures, writeAmplification } from './db/properties.js';
import { openIterator, type IteratorOptions, type DBIteratorHandle } from './db/iterators.js';
import { getMany } from './db/get-many.js';
import { prepareRangeDeletion, type ClearOptions } from './db/range-delete.js';
import { approximateSize } from './db/approximate-size.js';
import { repairDB, type RepairOptions, type RepairReport } from './db/repair.js';
import { destroyDB, type DestroyOptions, type DestroyReport } from './db/destroy.js';
import { levelDBStats } from './db/leveldb-stats.js';
import { checkCheckpointOptions, checkpointSteps, runSteps, runStepsSync, type CheckpointOptions, type CheckpointReport } from './db/checkpoint.js';

export interface WriteOptions {
  /** fdatasync the WAL before the write resolves: it then survives a machine crash. @defaultValue false */
  sync?: boolean;
}

export interface ReadOptions {
  /** Read the database as it was when the snapshot was taken. */
  snapshot?: Snapshot;
}

export type BatchOperation =
  | { type: 'put'; key: Uint8Array | string; value: Uint8Array | string }
  | { type: 'del'; key: Uint8Array | string };

export interface OpenOptions extends Options {
  /** Shards the keys across regions (sub-directories); see the README's "Shards". */
  router?: RegionRouter;
}

function checkWriteOptions(options: WriteOptions | undefined): boolean {
  if (options === undefined) return false;
  if (options === null || typeof options !== 'object') throw invalidArgument('write options must be an object');
  if (options.sync !== undefined && typeof options.sync !== 'boolean') throw invalidArgument('option sync must be a boolean');
  return options.sync === true;
}

/** Encodes `operations`; stops with INVALID_ARGUMENT as soon as the encoding passes `maxBytes`. */
function batchOf(operations: readonly BatchOperation[], maxBytes: number): WriteBatch {
  if (!Array.isArray(operations)) throw invalidArgument('batch operations must be an array');
  const batch = new WriteBatch();
  // One buffer of about the batch's size, instead of doubling from 256 bytes and copying.
  const estimate = encodedSizeBound(operations);
  if (estimate <= maxBytes) batch.reserve(estimate);
  for (const op of operations) {
    if (op === null || typeof op !== 'object') throw invalidArgument('a batch operation must be an object');
    if (op.type === 'put') batch.put(toBytes(op.key, 'key'), toBytes(op.value, 'value'));
    else if (op.type === 'del') batch.del(toBytes(op.key, 'key'));
    else throw invalidArgument(`unknown batch operation type ${String((op as { type: unknown }).type)}`);
    if (batch.byteLength > maxBytes) throw invalidArgument(`the batch is over maxBatchSize (${maxBytes} bytes) after ${batch.count} operations`);
  }
  return batch;
}

/**
 * An upper bound on the encoded size of `operations` (a tag and two 5-byte varints per entry;
 * a string key or value at 3 bytes per UTF-16 unit), without encoding anything. Operations that
 * are not well formed count nothing: encoding them throws anyway.
 */
function encodedSizeBound(operations: readonly BatchOperation[]): number {
  let bytes = 12;
  for (let i = 0; i < operations.length; i++) {
    const op = operations[i] as { key?: unknown; value?: unknown } | null;
    if (op === null || typeof op !== 'object') continue;
    bytes += 11 + byteBound(op.key) + byteBound(op.value);
  }
  return bytes;
}

function byteBound(x: unknown): number {
  if (x instanceof Uint8Array) return x.length;
  return typeof x === 'string' ? 3 * x.length : 0;
}

/** A router must be a RegionRouter: a name, regions 0..n-1 and a regionOf function. */
function checkRouter(router: unknown): void {
  const r = router as RegionRouter | null;
  if (
    r === null ||
    typeof r !== 'object' ||
    typeof r.name !== 'string' ||
    r.name === '' ||
    typeof r.regionOf !== 'function' ||
    !Array.isArray(r.regions) ||
    r.regions.length === 0 ||
    !r.regions.every((n, i) => n === i)
  ) {
    throw invalidArgument('option router must be a RegionRouter: { name: string, regions: [0, 1, …, n-1], regionOf(key): number }');
  }
}

export class DB {
  readonly #impl: DBImpl;

  private constructor(impl: DBImpl) {
    this.#impl = impl;
  }

  /** Opens (by default creating) the database in `dir`. Rejects with LOCKED if it is open elsewhere. */
  static async open(dir: string, options: OpenOptions = {}): Promise<DB> {
    return DB.openSync(dir, options);
  }

  /** The synchronous twin of `open`. */
  static openSync(dir: string, options: OpenOptions = {}): DB {
    if (typeof dir !== 'string' || dir === '') throw invalidArgument('dir must be a non-empty string');
    if (options !== undefined && options !== null && typeof options !== 'object') throw invalidArgument('options must be an object');
    const { router, ...rest } = options ?? {};
    if (router !== undefined) checkRouter(router);
    const resolved = resolveOptions(rest);
    return new DB(router === undefined ? DBImpl.open(dir, resolved) : DBImpl.open(dir, resolved, router));
  }

  /** The directory this database lives in. */
  get location(): string {
    return this.#impl.dir;
  }

  get closed(): boolean {
    return this.#impl.closed;
  }

  #checkOpen(): void {
    if (this.#impl.closed) throw new SieveError(ErrorCode.CLOSED, 'the database is closed');
  }

  put(key: Uint8Array | string, value: Uint8Array | string, options?: WriteOptions): Promise<void> {
    try {
      this.#checkOpen();
      return this.#impl.writeOne(ValueType.VALUE, toBytes(key, 'key'), toBytes(value, 'value'), checkWriteOptions(options));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  putSync(key: Uint8Array | string, value: Uint8Array | string, options?: WriteOptions): void {
    this.#checkOpen();
    this.#impl.writeOneSync(ValueType.VALUE, toBytes(key, 'key'), toBytes(value, 'value'), checkWriteOptions(options));
  }

  del(key: Uint8Array | string, options?: WriteOptions): Promise<void> {
    try {
      this.#checkOpen();
      return this.#impl.writeOne(ValueType.DELETION, toBytes(key, 'key'), EMPTY, checkWriteOptions(options));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  delSync(key: Uint8Array | string, options?: WriteOptions): void {
    this.#checkOpen();
    this.#impl.writeOneSync(ValueType.DELETION, toBytes(key, 'key'), EMPTY, checkWriteOptions(options));
  }

  /**
   * Applies every operation atomically: after a crash, all of them or none. With no arguments,
   * a chained batch (`db.batch().put(k, v).del(k).write()`) that encodes as it goes.
   */
  batch(): ChainedBatch;
  batch(operations: readonly BatchOperation[], options?: WriteOptions): Promise<void>;
  batch(operations?: readonly BatchOperation[], options?: WriteOptions): Promise<void> | ChainedBatch {
    if (arguments.length === 0) {
      this.#checkOpen();
      const impl = this.#impl;
      return new ChainedBatch({
        maxBatchSize: impl.options.maxBatchSize,
        write: (batch, opts) => impl.write(batch, checkWriteOptions(opts as WriteOptions | undefined)),
        writeSync: (batch, opts) => impl.writeSync(batch, checkWriteOptions(opts as WriteOptions | undefined)),
      });
    }
    try {
      this.#checkOpen();
      return this.#impl.write(batchOf(operations!, this.#impl.options.maxBatchSize), checkWriteOptions(options));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  batchSync(operations: readonly BatchOperation[], options?: WriteOptions): void {
    this.#checkOpen();
    this.#impl.writeSync(batchOf(operations, this.#impl.options.maxBatchSize), checkWriteOptions(options));
  }

  /** The value of `key` (an owned Buffer), or undefined if it is absent. */
  get(key: Uint8Array | string, options?: ReadOptions): Promise<Buffer | undefined> {
    try {
      return Promise.resolve(this.getSync(key, options));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  getSync(key: Uint8Array | string, options?: ReadOptions): Buffer | undefined {
    this.#checkOpen();
    const k = toBytes(key, 'key');
    const value = this.#impl.get(k, this.#sequenceOf(options));
    return value === undefined ? undefined : Buffer.from(value);
  }

  /** True if `key` has a value (read as `get`, without copying the value). */
  has(key: Uint8Array | string, options?: ReadOptions): Promise<boolean> {
    try {
      return Promise.resolve(this.hasSync(key, options));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  hasSync(key: Uint8Array | string, options?: ReadOptions): boolean {
    this.#checkOpen();
    const k = toBytes(key, 'key');
    return this.#impl.get(k, this.#sequenceOf(options)) !== undefined;
  }

  /**
   * The values of `keys` (owned Buffers, undefined where absent), in the order asked, all read at
   * one moment (the snapshot's, or now). See db/get-many.ts.
   */
  getMany(keys: readonly (Uint8Array | string)[], options?: ReadOptions): Promise<(Buffer | undefined)[]> {
    try {
      return Promise.resolve(this.getManySync(keys, options));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  getManySync(keys: readonly (Uint8Array | string)[], options?: ReadOptions): (Buffer | undefined)[] {
    this.#checkOpen();
    if (!Array.isArray(keys)) throw invalidArgument('keys must be an array');
    const bytes = keys.map((k) => toBytes(k, 'key'));
    const impl = this.#impl;
    return getMany(impl, bytes, this.#sequenceOf(options) ?? impl.lastSequence);
  }

  #sequenceOf(options: ReadOptions | undefined): number | undefined {
    if (options === undefined) return undefined;
    if (options === null || typeof options !== 'object') throw invalidArgument('read options must be an object');
    const snapshot = options.snapshot;
    if (snapshot === undefined) return undefined;
    if (!(snapshot instanceof Snapshot)) {
      throw invalidArgument('option snapshot must come from db.snapshot()');
    }
    snapshot.check(this.#impl.snapshots);
    return snapshot.sequence;
  }

  /** A consistent view of the database now; `release()` it when done. */
  snapshot(): Snapshot {
    this.#checkOpen();
    return this.#impl.snapshot();
  }

  /** Iterates entries in key order (or reverse), within bounds, at a snapshot. */
  iterator(options: IteratorOptions = {}): DBIteratorHandle {
    this.#checkOpen();
    return openIterator(this.#impl, options);
  }

  /**
   * Deletes every key in a range (`gt`/`gte`/`lt`/`lte` as for `iterator`, at most `limit` keys,
   * from the top with `reverse`; with `snapshot`, the keys it sees) as one atomic batch of plain
   * deletions, without reading values. Resolves with the number of keys deleted. A range too large
   * for one batch (`maxBatchSize`) is INVALID_ARGUMENT, nothing deleted. See db/range-delete.ts.
   */
  clear(options?: ClearOptions): Promise<number> {
    try {
      this.#checkOpen();
      const { batch, sync } = prepareRangeDeletion(this.#impl, options);
      return this.#impl.write(batch, sync).then(() => batch.count);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  clearSync(options?: ClearOptions): number {
    this.#checkOpen();
    const { batch, sync } = prepareRangeDeletion(this.#impl, options);
    this.#impl.writeSync(batch, sync);
    return batch.count;
  }

  /**
   * The approximate bytes of table files holding keys in [start, end) (LevelDB's
   * GetApproximateSizes: from the tables' index blocks; what is only in the memtables counts
   * nothing). 0 when end ≤ start. See db/approximate-size.ts.
   */
  approximateSize(start: Uint8Array | string, end: Uint8Array | string): Promise<number> {
    try {
      return Promise.resolve(this.approximateSizeSync(start, end));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  approximateSizeSync(start: Uint8Array | string, end: Uint8Array | string): number {
    this.#checkOpen();
    return approximateSize(this.#impl, toBytes(start, 'start'), toBytes(end, 'end'));
  }

  /**
   * Flushes the memtables and compacts the key range [start, end] (everything when omitted) down
   * to the deepest level holding data there: afterwards that level holds one version per key.
   */
  async compactRange(start?: Uint8Array | string, end?: Uint8Array | string): Promise<void> {
    this.#checkOpen();
    const begin = start === undefined ? undefined : toBytes(start, 'start');
    const last = end === undefined ? undefined : toBytes(end, 'end');
    await this.#impl.compactRange(begin, last);
  }

  /**
   * For a database opened with `readOnly: true`: catches up with the writer's state on disk now
   * (its MANIFEST's tables and its WALs, re-read; RocksDB's secondary instance catching up).
   * Iterators already open keep reading what they opened on. INVALID_ARGUMENT while a snapshot is
   * held (release it first); NOT_SUPPORTED on a database opened for writing.
   */
  refresh(): Promise<void> {
    try {
      this.refreshSync();
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(err);
    }
  }

  refreshSync(): void {
    this.#checkOpen();
    this.#impl.refresh();
  }

  /**
   * Makes a consistent copy of the database in `dir` (a new or empty directory), as of this call:
   * opening it gives every write issued before the call and none after. Tables are hard-linked
   * where the file system allows (copied otherwise); the MANIFEST and the WALs are copied up to
   * where they ended. Writes go on meanwhile. Resolves with what was linked and copied. See
   * db/checkpoint.ts. INVALID_ARGUMENT for a non-empty `dir`; NOT_SUPPORTED when opened readOnly.
   */
  checkpoint(dir: string, options?: CheckpointOptions): Promise<CheckpointReport> {
    try {
      this.#checkOpen();
      return runSteps(checkpointSteps(this.#impl, dir, checkCheckpointOptions(options)));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** The synchronous twin of `checkpoint`: the thread is blocked until the copy is made. */
  checkpointSync(dir: string, options?: CheckpointOptions): CheckpointReport {
    this.#checkOpen();
    return runStepsSync(checkpointSteps(this.#impl, dir, checkCheckpointOptions(options)));
  }

  /**
   * A property of the database as a string, or undefined for an unknown name:
   * `sievekv.stats` (JSON: counters and per-level files and bytes), `sievekv.num-files-at-level<N>`,
   * `sievekv.approximate-memory-usage`, `sievekv.estimate-num-keys`, `sievekv.regions` (JSON: per
   * region keys, bytes, levels and filter counters). `leveldb.` prefixes work too, except that
   * `leveldb.stats` is LevelDB's text table of files, size and compaction work per level.
   */
  getProperty(name: string): string | undefined {
    this.#checkOpen();
    if (typeof name !== 'string') throw invalidArgument('property name must be a string');
    if (name === 'leveldb.stats') return levelDBStats(this.#impl);
    const prop = name.startsWith('leveldb.') ? `sievekv.${name.slice('leveldb.'.length)}` : name;
    const impl = this.#impl;
    const level = /^sievekv\.num-files-at-level(\d+)$/.exec(prop);
    if (level) {
      const n = Number(level[1]);
      return n < NUM_LEVELS ? String(impl.numFilesAtLevel(n)) : undefined;
    }
    switch (prop) {
      case 'sievekv.stats':
        return JSON.stringify(
          { ...impl.stats.toJSON(), writeAmplification: writeAmplification(impl), lastSequence: impl.lastSequence, levels: levelSummary(impl) },
          null,
          2,
        );
      case 'sievekv.approximate-memory-usage':
        return String(impl.regions.reduce((sum, r) => sum + r.mem.approximateMemoryUsage + (r.imm?.approximateMemoryUsage ?? 0), 0));
      case 'sievekv.estimate-num-keys':
        return String(estimateNumKeys(impl));
      case 'sievekv.regions':
        return JSON.stringify(regionFigures(impl), null, 2);
      default:
        return undefined;
    }
  }

  /** Waits for pending writes, closes every file and releases the directory. Idempotent. */
  close(): Promise<void> {
    return this.#impl.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /**
   * Rebuilds the MANIFEST of the (closed) database in `dir` from the tables and WALs it finds,
   * as LevelDB's RepairDB: for a missing CURRENT, a damaged MANIFEST, a damaged table or WAL.
   * What cannot be read goes to `lost/`; the report says what was kept and dropped. Rejects with
   * LOCKED if the database is open. See db/repair.ts.
   */
  static async repair(dir: string, options: RepairOptions = {}): Promise<RepairReport> {
    return repairDB(dir, options);
  }

  /**
   * Removes the (closed) database in `dir`: only its own files, and the directory once empty.
   * Rejects with LOCKED if the database is open. See db/destroy.ts.
   */
  static async destroy(dir: string, options: DestroyOptions = {}): Promise<DestroyReport> {
    return destroyDB(dir, options);
  }
}
