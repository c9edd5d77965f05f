/**
 * The contract every iterator over internal keys meets (LevelDB's table/iterator.h): block,
 * table, memtable, level, merging. The database iterator (db-iterator.ts) turns one of these into
 * the user's view (one version per key, deletions hidden, bounds, snapshot).
 *
 * - Not positioned until one of the seeks. `key`/`value`/`next`/`prev` require `valid()`.
 * - `seek(target)` positions at the first entry whose internal key is ≥ target (target is an
 *   internal key: user key ‖ fixed64(seq << 8 | type)); `seekToLast` at the last entry. The
 *   target is borrowed for the call only (the database iterator builds every target in one
 *   buffer): an iterator that needs it later keeps a copy.
 * - `key()` and `value()` are borrowed: valid until the iterator moves or closes. Copy to keep.
 * - Errors (a corrupt block, an I/O failure) are thrown from the call that meets them.
 * - `close()` releases what the iterator pins (cached blocks, a version); idempotent.
 * - `seekIfMayMatch(target, probes)` (optional; tables, levels and memtables have it):
 *   `seek(target)` and true, unless a filter shows that the entry the seek would land on has a
 *   larger user key than `target`'s (or that there is none): then false, having read no data
 *   block (a memtable: not searched its list), and the iterator must be sought before any other
 *   use. `probes` is reset to `target`'s user key. A merging iterator uses it to put off such a
 *   child's seek until its entries are needed. `tableFilterAsked` (a level iterator over tables):
 *   the caller has asked the whole-table filter already, and it said maybe.
 */
import type { KeyProbes } from '../filter/key-probes.js';

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
  seekIfMayMatch?(target: Uint8Array, probes: KeyProbes, tableFilterAsked?: boolean): boolean;
  /**
   * Optional (levels and merges have it): lets go of what the iterator holds beyond itself (an
   * open file's table iterator, its block and readahead) while it waits to be used again; it must
   * be sought before any other use.
   */
  park?(): void;
}
