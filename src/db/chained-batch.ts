/**
 * ChainedBatch: `db.batch()` with no arguments, as abstract-level's chained batch —
 * `db.batch().put(k, v).del(k).write()`. Each call encodes its operation straight into one
 * WriteBatch (no operation objects, no second pass), checked against `maxBatchSize` as it grows.
 * `write()` (or `writeSync()`) commits it atomically, once; `close()` discards it. After either,
 * every call is CLOSED.
 */
import { ErrorCode, invalidArgument, SieveError } from '../errors.js';
import { toBytes } from '../key-encoding.js';
import { WriteBatch } from '../wal/write-batch.js';

/** How the database commits a chained batch (`options` are the caller's write options, unchecked). */
/** The type byte and two varint32 lengths of an entry, at most. */
const MAX_ENTRY_OVERHEAD = 1 + 5 + 5;

export interface ChainedBatchHost {
  readonly maxBatchSize: number;
  write(batch: WriteBatch, options: unknown): Promise<void>;
  writeSync(batch: WriteBatch, options: unknown): void;
}

export class ChainedBatch {
  readonly #host: ChainedBatchHost;
  #batch: WriteBatch | null = new WriteBatch();

  /** @internal Made by `db.batch()`. */
  constructor(host: ChainedBatchHost) {
    this.#host = host;
  }

  /** Operations queued so far. */
  get length(): number {
    return this.#open().count;
  }

  /** Queues a put of `key`; INVALID_ARGUMENT (nothing queued) for a bad type or past maxBatchSize. */
  put(key: Uint8Array | string, value: Uint8Array | string): this {
    const batch = this.#open();
    const k = toBytes(key, 'key');
    const v = toBytes(value, 'value');
    this.#checkRoom(batch, k.length + v.length);
    batch.put(k, v);
    return this;
  }

  /** Queues a delete of `key`. */
  del(key: Uint8Array | string): this {
    const batch = this.#open();
    const k = toBytes(key, 'key');
    this.#checkRoom(batch, k.length);
    batch.del(k);
    return this;
  }

  /** Drops every queued operation; the batch stays open. */
  clear(): this {
    this.#open().clear();
    return this;
  }

  /** Commits the queued operations atomically (`{ sync }` as for `db.batch`); the batch is then closed. */
  write(options?: { sync?: boolean }): Promise<void> {
    try {
      return this.#host.write(this.#take(), options);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** The synchronous twin of `write`. */
  writeSync(options?: { sync?: boolean }): void {
    this.#host.writeSync(this.#take(), options);
  }

  /** Discards the batch without writing. Idempotent. */
  close(): Promise<void> {
    this.#batch = null;
    return Promise.resolve();
  }

  #open(): WriteBatch {
    if (this.#batch === null) throw new SieveError(ErrorCode.CLOSED, 'the batch was written or closed');
    return this.#batch;
  }

  #take(): WriteBatch {
    const batch = this.#open();
    this.#batch = null;
    return batch;
  }

  /**
   * Refuses, before it is encoded, an operation of `bytes` key and value bytes that could take the
   * batch past maxBatchSize (counting the most its type byte and two varint lengths can take).
   */
  #checkRoom(batch: WriteBatch, bytes: number): void {
    if (batch.byteLength + bytes + MAX_ENTRY_OVERHEAD <= this.#host.maxBatchSize) return;
    throw invalidArgument(`the batch would pass maxBatchSize (${this.#host.maxBatchSize} bytes)`);
  }
}
