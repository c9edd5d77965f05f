/**
 * Level 0's whole-table filters asked together, for one region's point lookups (TableAccess).
 *
 * A lookup consults every level-0 file whose key range holds the key, newest first, and each file
 * asks its whole-table filter: a cache miss per file, taken one after the other, since each answer
 * decides whether the next file is asked. With level 0 behind (ten files after a burst of writes,
 * random keys, so every range holds every key) a lookup of an absent key spends most of its time
 * waiting on those misses. `mayMatch` asks the filters of all the files in range in one loop whose
 * loads do not wait on each other (blockedBloomMayMatchMany), so the misses overlap; the lookup
 * then visits only the files that may hold the key, in the same order as before.
 *
 * Held for one version's level-0 list (a Version never changes its lists, so the array's identity
 * names it) and rebuilt when a lookup brings another. What it holds per file: the table (for its
 * counters) and the filter's bytes, which stay valid when the table cache closes the table (no
 * file handle is kept). A file whose table cannot be opened here, or whose filter is not a blocked
 * Bloom filter of the policy the others use, gets no entry and is always consulted: the ordinary
 * path then reports its error, or asks its filter, in order.
 */
import { blockedBloomMayMatchMany, BlockedBloomFilterPolicy } from '../filter/blocked-bloom.js';
import type { KeyProbes } from '../filter/key-probes.js';
import type { FilterPolicy } from '../filter/policy.js';
import type { Table } from '../sstable/table.js';
import type { TableCache } from '../sstable/table-cache.js';
import type { FileMetaData } from '../version/version-edit.js';

/**
 * Level-0 files in a lookup's range from which the filters are asked together: with one there is
 * nothing to overlap.
 */
export const LEVEL0_BATCH_MIN_FILES = 2;

export class Level0Filters {
  /** The level-0 list these entries describe, or null before the first use. */
  #files: readonly FileMetaData[] | null = null;
  #tables: (Table | undefined)[] = [];
  #filters: (Uint8Array | undefined)[] = [];
  #policy: FilterPolicy | undefined;
  /** Per file of the list: SKIP, MAY_MATCH or RULED_OUT (blocked-bloom.ts), written by each lookup. */
  #answers = new Uint8Array(0);

  /**
   * The answers array for `files` (level 0 of the version being read): at least `files.length`
   * long, to be filled by the caller with MAY_MATCH for each file in the key's range and SKIP for
   * the others, then passed to `mayMatch`. Reused by every lookup. Opens the files' tables the first time a
   * list is seen.
   */
  prepare(files: readonly FileMetaData[], cache: TableCache): Uint8Array {
    if (files !== this.#files) this.#load(files, cache);
    return this.#answers;
  }

  /**
   * Sets `answers[i]` to RULED_OUT for each file asked whose filter rules out the key `probes` was
   * reset to. `answers` comes from `prepare`.
   */
  mayMatch(answers: Uint8Array, probes: KeyProbes): void {
    const policy = this.#policy;
    if (policy === undefined) return;
    // A table the cache has closed since is consulted the ordinary way (reopened, its errors
    // reported), as before: its filter is not asked for it.
    const tables = this.#tables;
    for (let i = 0; i < tables.length; i++) {
      if (tables[i]?.isClosed === true) {
        tables[i] = undefined;
        this.#filters[i] = undefined;
      }
    }
    blockedBloomMayMatchMany(probes.probeFor(policy), this.#filters, answers);
  }

  /**
   * Counts on file `i`'s table the negative `mayMatch` gave, when the lookup comes to that file
   * (as the table's own `get` would have counted it then).
   */
  countNegative(i: number): void {
    this.#tables[i]?.countFilterNegative();
  }

  /** Lets go of the tables and filters held (a table was evicted, or the database is closing). */
  clear(): void {
    this.#files = null;
    this.#tables = [];
    this.#filters = [];
    this.#policy = undefined;
  }

  #load(files: readonly FileMetaData[], cache: TableCache): void {
    this.#files = files;
    this.#tables = new Array<Table | undefined>(files.length);
    this.#filters = new Array<Uint8Array | undefined>(files.length);
    this.#policy = undefined;
    if (this.#answers.length < files.length) this.#answers = new Uint8Array(Math.max(files.length, 2 * this.#answers.length));
    for (let i = 0; i < files.length; i++) {
      const file = files[i]!;
      let table: Table;
      try {
        table = cache.findTable(file.number, file.fileSize);
      } catch {
        continue; // consulted in order by the ordinary path, which reports the error then
      }
      const filter = table.wholeTableFilter;
      const policy = table.filterPolicy;
      // The built-in class itself: a subclass may hash otherwise (as full-filter-block.ts tests).
      if (filter === undefined || policy === undefined || Object.getPrototypeOf(policy) !== BlockedBloomFilterPolicy.prototype) continue;
      this.#policy ??= policy;
      if (policy !== this.#policy) continue;
      this.#tables[i] = table;
      this.#filters[i] = filter;
    }
  }
}
