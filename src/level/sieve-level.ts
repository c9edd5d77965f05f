/**
 * SieveLevel: sievekv behind abstract-level's API (`import { SieveLevel } from 'sievekv/level'`),
 * a drop-in for classic-level: encodings (utf8, json, buffer, view and the rest abstract-level
 * transcodes), deferred open, sublevels, hooks and events come from abstract-level; this class
 * maps its private methods onto a sievekv `DB`.
 *
 *   const db = new SieveLevel('./data', { valueEncoding: 'json', compression: 'snappy' });
 *   await db.put('a', { x: 1 });                     // opens on first use (deferred open)
 *   for await (const [k, v] of db.iterator({ gt: 'a' })) { … }
 *
 * Options: abstract-level's (`keyEncoding`, `valueEncoding`) and sievekv's (see the README's
 * Options; `createIfMissing` and `errorIfExists` mean the same in both) go to the constructor or
 * `open()`. Other properties are ignored, as Level ignores options an implementation does not
 * know; a bad value of a sievekv option fails the open with its INVALID_ARGUMENT as `cause`.
 *
 * Reads use sievekv's synchronous calls (`getSync`, `getManySync`, `hasSync`): the data is in
 * memory or one page-cache read away, so a promise per call is all the asynchrony there is.
 * Writes go through the async API (group commit for `sync: true`).
 */
import { AbstractLevel, type AbstractDatabaseOptions } from 'abstract-level';
import { DB, type OpenOptions, type ReadOptions, type WriteOptions } from '../db.js';
import { ErrorCode, SieveError } from '../errors.js';
import { OPTION_NAMES } from '../options.js';
import { decoderFor } from './formats.js';
import { SieveChainedBatch } from './sieve-chained-batch.js';
import { SieveIterator, SieveKeyIterator, SieveValueIterator, type LevelIteratorOptions } from './sieve-iterator.js';
import { engineSnapshot, SieveSnapshot } from './sieve-snapshot.js';

/** The constructor's and `open()`'s options: abstract-level's and sievekv's. */
export type SieveLevelOptions<K = string, V = string> = AbstractDatabaseOptions<K, V> & OpenOptions;

/** Every sievekv open option: exactly these pass through to `DB.open`. */
const SIEVE_OPTIONS: readonly string[] = [...OPTION_NAMES, 'router'];

function sieveOptions(options: Record<string, unknown>): OpenOptions {
  const picked: Record<string, unknown> = {};
  for (const name of SIEVE_OPTIONS) {
    if (options[name] !== undefined) picked[name] = options[name];
  }
  return picked as OpenOptions;
}

/** What this database stores natively and offers beyond abstract-level's defaults. */
function manifest(): object {
  return {
    encodings: { buffer: true, utf8: true, view: true },
    has: true,
    getSync: true,
    createIfMissing: true,
    errorIfExists: true,
    explicitSnapshots: true,
    implicitSnapshots: true,
    seek: true,
    permanence: true,
    // abstract-level checks an iterator's `signal` before every read, and every read is synchronous.
    signals: { iterators: true },
    additionalMethods: { approximateSize: true, compactRange: true },
  };
}

const SYNC: WriteOptions = Object.freeze({ sync: true });

/** sievekv's write options for abstract-level's (only `sync` matters). */
function writeOptions(options: { sync?: unknown } | undefined): WriteOptions | undefined {
  return options?.sync === true ? SYNC : undefined;
}

/** sievekv's read options for abstract-level's (the `snapshot`). */
function readOptions(options: { snapshot?: unknown } | undefined): ReadOptions | undefined {
  const snapshot = engineSnapshot(options?.snapshot);
  return snapshot === undefined ? undefined : { snapshot };
}

interface FormatOptions {
  keyEncoding: string;
  valueEncoding: string;
  snapshot?: unknown;
  sync?: unknown;
}

/** abstract-level's error for a call the database's state does not allow. */
function notOpen(method: string): Error {
  return Object.assign(new Error(`Database is not open: cannot call ${method}()`), { code: 'LEVEL_DATABASE_NOT_OPEN' });
}

export class SieveLevel<K = string, V = string> extends AbstractLevel<Buffer | Uint8Array | string, K, V> {
  readonly #location: string;
  #db: DB | null = null;

  /**
   * A database in the directory `location`, opened on first use (or by `open()`). TypeError for a
   * location that is not a non-empty string.
   */
  constructor(location: string, options?: SieveLevelOptions<K, V>) {
    if (typeof location !== 'string' || location === '') {
      throw new TypeError("The first argument 'location' must be a non-empty string");
    }
    super(manifest(), options);
    this.#location = location;
  }

  get location(): string {
    return this.#location;
  }

  /** The open sievekv database (abstract-level calls private methods only while open). */
  #open(): DB {
    const db = this.#db;
    if (db === null) throw new SieveError(ErrorCode.CLOSED, 'the database is not open');
    return db;
  }

  async _open(options: Record<string, unknown>): Promise<void> {
    this.#db = DB.openSync(this.#location, sieveOptions(options));
  }

  async _close(): Promise<void> {
    const db = this.#db;
    this.#db = null;
    await db?.close();
  }

  async _get(key: Uint8Array | string, options: FormatOptions): Promise<unknown> {
    return this._getSync(key, options);
  }

  _getSync(key: Uint8Array | string, options: FormatOptions): unknown {
    const value = this.#open().getSync(key, readOptions(options));
    return value === undefined ? undefined : decoderFor(options.valueEncoding)(value);
  }

  async _getMany(keys: (Uint8Array | string)[], options: FormatOptions): Promise<unknown[]> {
    const decode = decoderFor(options.valueEncoding);
    return this.#open()
      .getManySync(keys, readOptions(options))
      .map((v) => (v === undefined ? undefined : decode(v)));
  }

  async _has(key: Uint8Array | string, options: FormatOptions): Promise<boolean> {
    return this.#open().hasSync(key, readOptions(options));
  }

  async _hasMany(keys: (Uint8Array | string)[], options: FormatOptions): Promise<boolean[]> {
    const db = this.#open();
    const read = readOptions(options);
    return keys.map((k) => db.hasSync(k, read)); // one synchronous stretch: one moment for all
  }

  async _put(key: Uint8Array | string, value: Uint8Array | string, options: FormatOptions): Promise<void> {
    await this.#open().put(key, value, writeOptions(options));
  }

  async _del(key: Uint8Array | string, options: FormatOptions): Promise<void> {
    await this.#open().del(key, writeOptions(options));
  }

  async _batch(
    operations: ({ type: 'put'; key: Uint8Array | string; value: Uint8Array | string } | { type: 'del'; key: Uint8Array | string })[],
    options: { sync?: unknown },
  ): Promise<void> {
    await this.#open().batch(operations, writeOptions(options));
  }

  _chainedBatch(): SieveChainedBatch {
    return new SieveChainedBatch(this, this.#open().batch());
  }

  async _clear(options: LevelIteratorOptions & { sync?: unknown }): Promise<void> {
    const snapshot = engineSnapshot(options.snapshot);
    await this.#open().clear({
      ...(options.gt !== undefined ? { gt: options.gt as Uint8Array | string } : {}),
      ...(options.gte !== undefined ? { gte: options.gte as Uint8Array | string } : {}),
      ...(options.lt !== undefined ? { lt: options.lt as Uint8Array | string } : {}),
      ...(options.lte !== undefined ? { lte: options.lte as Uint8Array | string } : {}),
      reverse: options.reverse === true,
      limit: options.limit < 0 ? Infinity : options.limit,
      ...(snapshot !== undefined ? { snapshot } : {}),
      sync: options.sync === true,
    });
  }

  _iterator(options: LevelIteratorOptions): SieveIterator {
    return new SieveIterator(this, this.#open(), options);
  }

  _keys(options: LevelIteratorOptions): SieveKeyIterator {
    return new SieveKeyIterator(this, this.#open(), options);
  }

  _values(options: LevelIteratorOptions): SieveValueIterator {
    return new SieveValueIterator(this, this.#open(), options);
  }

  _snapshot(options: object): SieveSnapshot {
    return new SieveSnapshot(options, this.#open().snapshot());
  }

  /**
   * The approximate bytes of table files holding keys in [start, end) (sievekv's
   * `approximateSize`; classic-level's signature). Keys are encoded with `options.keyEncoding` or
   * the database's.
   */
  async approximateSize(start: K, end: K, options?: { keyEncoding?: string }): Promise<number> {
    if (arguments.length < 2) throw new TypeError("The arguments 'start' and 'end' are required");
    if (this.status === 'opening') return this.deferAsync(() => this.approximateSize(start, end, options));
    const db = this.#whenOpen('approximateSize');
    const encode = this.#keyEncoder(options);
    return db.approximateSize(encode(start), encode(end));
  }

  /**
   * Flushes the memtables and compacts the keys in [start, end] (sievekv's `compactRange`;
   * classic-level's signature).
   */
  async compactRange(start: K, end: K, options?: { keyEncoding?: string }): Promise<void> {
    if (arguments.length < 2) throw new TypeError("The arguments 'start' and 'end' are required");
    if (this.status === 'opening') return this.deferAsync(() => this.compactRange(start, end, options));
    const db = this.#whenOpen('compactRange');
    const encode = this.#keyEncoder(options);
    await db.compactRange(encode(start), encode(end));
  }

  /**
   * A sievekv property (`sievekv.stats`, `leveldb.num-files-at-level0`, …) or undefined; see the
   * README. Readable while the sievekv database is open: also while abstract-level is closing
   * (the 'closing' event), for a last look at the stats.
   */
  getProperty(name: string): string | undefined {
    if (this.#db === null) throw notOpen('getProperty');
    return this.#db.getProperty(name);
  }

  /** Encodes a key with `options.keyEncoding` or the database's. */
  #keyEncoder(options: { keyEncoding?: string } | undefined): (key: K) => Uint8Array | string {
    const encoding = options?.keyEncoding === undefined ? this.keyEncoding() : this.keyEncoding(options.keyEncoding as never);
    return (key) => encoding.encode(key as never) as Uint8Array | string;
  }

  /** The open database, or abstract-level's LEVEL_DATABASE_NOT_OPEN error. */
  #whenOpen(method: string): DB {
    if (this.status !== 'open' || this.#db === null) throw notOpen(method);
    return this.#db;
  }
}
