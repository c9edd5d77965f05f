/**
 * SieveChainedBatch: abstract-level's chained batch (`db.batch().put(k, v).del(k).write()`) over
 * sievekv's ChainedBatch, which encodes each operation into one WriteBatch as it is queued (no
 * operation objects kept) and commits it atomically on `write()`. abstract-level validates and
 * encodes the keys and values, runs the prewrite hook and emits the write event; it closes the
 * batch after `write()` or on `close()`, which discards what sievekv queued.
 */
import { AbstractChainedBatch } from 'abstract-level';
import type { ChainedBatch } from '../db/chained-batch.js';

export class SieveChainedBatch extends AbstractChainedBatch<unknown, unknown, unknown> {
  readonly #batch: ChainedBatch;

  /** @internal Made by `SieveLevel#_chainedBatch` with the open database's `db.batch()`. */
  constructor(level: unknown, batch: ChainedBatch) {
    super(level);
    this.#batch = batch;
  }

  _put(key: Uint8Array | string, value: Uint8Array | string): void {
    this.#batch.put(key, value);
  }

  _del(key: Uint8Array | string): void {
    this.#batch.del(key);
  }

  _clear(): void {
    this.#batch.clear();
  }

  async _write(options: { sync?: unknown }): Promise<void> {
    await this.#batch.write({ sync: options.sync === true });
  }

  async _close(): Promise<void> {
    await this.#batch.close();
  }
}
