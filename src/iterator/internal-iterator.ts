/**
 * The contract every iterator over internal keys meets (LevelDB's table/iterator.h): block,
 * table, memtable, level, merging. The database iterator (db-iterator.ts) turns one of these into
 * the user's view (one version per key, deletions hidden, bounds, snapshot).
 *
 * - Not positioned until one of the seeks. `key`/`value`/`next`/`prev` require `valid()`.
 * - `seek(target)` positions at the first entry whose internal key is ≥ target (target is an
 *   internal key: user key ‖ fixed64(seq << 8 | type)); `seekToLast` at the last entry.
 * - `key()` and `value()` are borrowed: valid until the iterator moves or closes. Copy to keep.
 * - Errors (a corrupt block, an I/O failure) are thrown from the call that meets them.
 * - `close()` releases what the iterator pins (cached blocks, a version); idempotent.
 */
export interface InternalIterator {
  valid(): boolean;
  seekToFirst(): void;
  seekToLast(): void;
  seek(target: Uint8Array): void;
  next(): void;
  prev(): void;
  key(): Uint8Array;
  value(): Uint8Array;
  close(): void;
}
