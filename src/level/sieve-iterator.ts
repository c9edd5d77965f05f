/**
 * SieveLevel's iterators: abstract-level's entry, key and value iterators over one sievekv
 * EntryIterator (synchronous underneath: `_nextv` and `_all` fill their arrays in one call, with
 * no promise per entry). The sievekv iterator holds the range, the limit and the snapshot it was
 * made at; it reads as of its creation (an implicit snapshot) or at the explicit one.
 *
 * Seek follows Level: a target outside the range leaves the iterator at its natural end until the
 * next seek (sievekv's own seek would go to the nearest key in range). abstract-level guards the
 * calls (busy, closed, a signal aborted before a read) and counts the limit too; a read given a
 * `signal` also waits one microtask and fails with LEVEL_ABORTED if it was aborted meanwhile (the
 * read itself is synchronous: nothing else could interrupt it). Closing the iterator (also when
 * the database closes) closes the sievekv one and releases what it pinned.
 */
import { AbstractIterator, AbstractKeyIterator, AbstractValueIterator } from 'abstract-level';
import type { DB } from '../db.js';
import type { IteratorOptions } from '../db/iterators.js';
import { ErrorCode, SieveError } from '../errors.js';
import { compareBytes } from '../format/bytes.js';
import type { Entry, EntryIterator } from '../iterator/entry-iterator.js';
import { resolveIteratorOptions, type ResolvedIteratorOptions } from '../iterator/iterator-options.js';
import { toBytes } from '../key-encoding.js';
import { decoderFor, type Decode } from './formats.js';
import { engineSnapshot } from './sieve-snapshot.js';

/** What abstract-level passes a private iterator method (range options already encoded). */
export interface LevelIteratorOptions {
  gt?: unknown;
  gte?: unknown;
  lt?: unknown;
  lte?: unknown;
  reverse: boolean;
  /** -1 for none. */
  limit: number;
  keys?: boolean;
  values?: boolean;
  keyEncoding: string;
  valueEncoding: string;
  snapshot?: unknown;
  signal?: AbortSignal | null;
}

/** abstract-level's AbortError (LEVEL_ABORTED), for a read its signal aborted while it ran. */
class AbortError extends Error {
  readonly code = 'LEVEL_ABORTED';
  constructor() {
    super('Operation has been aborted');
  }
  override get name(): string {
    return 'AbortError';
  }
}

/**
 * The sievekv iterator for `options`, and its seek state. Owned by one abstract-level iterator.
 * With a snapshot already closed there is no sievekv iterator: abstract-level refuses every read
 * of it (LEVEL_SNAPSHOT_NOT_OPEN) before one gets here.
 */
class Cursor<T> {
  readonly #it: EntryIterator | null;
  /** What the abstract-level iterator hands out for an entry. */
  readonly #make: (e: Entry) => T;
  readonly #range: ResolvedIteratorOptions;
  readonly #signal: AbortSignal | null;
  /** Set by a seek outside the range: the iterator is at its end until the next seek. */
  #parked = false;

  constructor(db: DB, options: LevelIteratorOptions, values: boolean, make: (e: Entry) => T) {
    this.#make = make;
    const engine: IteratorOptions = {
      reverse: options.reverse,
      limit: options.limit < 0 ? Infinity : options.limit,
      values,
    };
    for (const bound of ['gt', 'gte', 'lt', 'lte'] as const) {
      const x = options[bound];
      if (x !== undefined && x !== null) engine[bound] = x as Uint8Array | string;
    }
    const snapshot = engineSnapshot(options.snapshot);
    if (snapshot !== undefined) engine.snapshot = snapshot;
    this.#range = resolveIteratorOptions({ ...engine, snapshot: undefined });
    this.#signal = options.signal ?? null;
    this.#it = snapshot?.released === true ? null : db.iterator(engine);
  }

  /**
   * Resolves once a read may go on: at once without a signal; else after a turn of the event
   * loop's microtasks, rejecting if the signal was aborted meanwhile (the read was asked for, then
   * aborted: abstract-level checks only before it starts).
   */
  async #ready(): Promise<void> {
    const signal = this.#signal;
    if (signal === null) return;
    await null;
    if (signal.aborted) throw new AbortError();
  }

  /** The next item, once #ready; undefined at the end. */
  async read(): Promise<T | undefined> {
    await this.#ready();
    const e = this.#next();
    return e === undefined ? undefined : this.#make(e);
  }

  /** Up to `size` items, once #ready (fewer at the end). */
  async readMany(size: number): Promise<T[]> {
    await this.#ready();
    const out: T[] = [];
    while (out.length < size) {
      const e = this.#next();
      if (e === undefined) break;
      out.push(this.#make(e));
    }
    return out;
  }

  #next(): Entry | undefined {
    return this.#parked ? undefined : this.#open().nextSync();
  }

  seek(target: unknown): void {
    const key = toBytes(target, 'seek target');
    this.#parked = !this.#inRange(key);
    if (!this.#parked) this.#open().seek(key);
  }

  close(): void {
    this.#it?.close();
  }

  #open(): EntryIterator {
    if (this.#it === null) throw new SieveError(ErrorCode.CLOSED, 'snapshot was released');
    return this.#it;
  }

  #inRange(key: Uint8Array): boolean {
    const { lower, lowerInclusive, upper, upperInclusive } = this.#range;
    if (lower !== null) {
      const c = compareBytes(key, lower);
      if (c < 0 || (c === 0 && !lowerInclusive)) return false;
    }
    if (upper !== null) {
      const c = compareBytes(key, upper);
      if (c > 0 || (c === 0 && !upperInclusive)) return false;
    }
    return true;
  }
}

/** `db.iterator()`: [key, value] pairs (a side is undefined when `keys`/`values` is false). */
export class SieveIterator extends AbstractIterator<unknown, unknown, unknown> {
  readonly #cursor: Cursor<[unknown, unknown]>;

  constructor(level: unknown, db: DB, options: LevelIteratorOptions) {
    const values = options.values !== false;
    const key: Decode | null = options.keys !== false ? decoderFor(options.keyEncoding) : null;
    const value: Decode | null = values ? decoderFor(options.valueEncoding) : null;
    // First: bad options throw before abstract-level tracks the iterator.
    const cursor = new Cursor(db, options, values, (e): [unknown, unknown] => [
      key === null ? undefined : key(e[0]),
      value === null ? undefined : value(e[1]),
    ]);
    super(level, options as never);
    this.#cursor = cursor;
  }

  _next(): Promise<[unknown, unknown] | undefined> {
    return this.#cursor.read();
  }

  _nextv(size: number): Promise<[unknown, unknown][]> {
    return this.#cursor.readMany(size);
  }

  _all(): Promise<[unknown, unknown][]> {
    return this.#cursor.readMany(Infinity);
  }

  _seek(target: unknown): void {
    this.#cursor.seek(target);
  }

  async _close(): Promise<void> {
    this.#cursor.close();
  }
}

/** `db.keys()`: values are never copied (a sievekv key scan). */
export class SieveKeyIterator extends AbstractKeyIterator<unknown, unknown> {
  readonly #cursor: Cursor<unknown>;

  constructor(level: unknown, db: DB, options: LevelIteratorOptions) {
    const key = decoderFor(options.keyEncoding);
    const cursor = new Cursor(db, options, false, (e) => key(e[0]));
    super(level, options as never);
    this.#cursor = cursor;
  }

  _next(): Promise<unknown> {
    return this.#cursor.read();
  }

  _nextv(size: number): Promise<unknown[]> {
    return this.#cursor.readMany(size);
  }

  _all(): Promise<unknown[]> {
    return this.#cursor.readMany(Infinity);
  }

  _seek(target: unknown): void {
    this.#cursor.seek(target);
  }

  async _close(): Promise<void> {
    this.#cursor.close();
  }
}

/** `db.values()`. */
export class SieveValueIterator extends AbstractValueIterator<unknown, unknown, unknown> {
  readonly #cursor: Cursor<unknown>;

  constructor(level: unknown, db: DB, options: LevelIteratorOptions) {
    const value = decoderFor(options.valueEncoding);
    const cursor = new Cursor(db, options, true, (e) => value(e[1]));
    super(level, options as never);
    this.#cursor = cursor;
  }

  _next(): Promise<unknown> {
    return this.#cursor.read();
  }

  _nextv(size: number): Promise<unknown[]> {
    return this.#cursor.readMany(size);
  }

  _all(): Promise<unknown[]> {
    return this.#cursor.readMany(Infinity);
  }

  _seek(target: unknown): void {
    this.#cursor.seek(target);
  }

  async _close(): Promise<void> {
    this.#cursor.close();
  }
}
