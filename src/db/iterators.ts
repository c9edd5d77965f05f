/**
 * Builds the user's iterator: one merged view of every region's memtables and tables, pinned
 * (the version is referenced until the iterator closes, so compaction keeps its files) and read
 * at one sequence number (the snapshot's, or the newest at creation). The database keeps a list of
 * the open ones (OpenIterators) and ends them when it closes.
 */
import { invalidArgument } from '../errors.js';
import { createEntryIterator, type EntryIterator } from '../iterator/entry-iterator.js';
import type { InternalIterator } from '../iterator/internal-iterator.js';
import { resolveIteratorOptions, type IteratorRangeOptions } from '../iterator/iterator-options.js';
import { LevelIterator } from '../iterator/level-iterator.js';
import { MemTableInternalIterator } from '../iterator/memtable-iterator.js';
import { MergingIterator } from '../iterator/merging-iterator.js';
import type { MemTable } from '../memtable/memtable.js';
import type { TableIteratorOptions } from '../sstable/table-iterator.js';
import { NUM_LEVELS } from '../version/version-edit.js';
import type { Version } from '../version/version.js';
import type { DBImpl } from './db-impl.js';
import { Snapshot } from './snapshot.js';

export interface IteratorOptions extends IteratorRangeOptions {
  /** Iterate the database as it was when the snapshot was taken. */
  snapshot?: Snapshot;
}

export type DBIteratorHandle = EntryIterator;

export function openIterator(db: DBImpl, options: IteratorOptions): DBIteratorHandle {
  if (options === null || typeof options !== 'object') throw invalidArgument('iterator options must be an object');
  const resolved = resolveIteratorOptions(options); // which passes `snapshot` over, for here
  const snapshot = options.snapshot;
  let sequence = db.lastSequence;
  if (snapshot !== undefined) {
    if (!(snapshot instanceof Snapshot)) throw invalidArgument('option snapshot must come from db.snapshot()');
    snapshot.check(db.snapshots);
    sequence = snapshot.sequence;
  }
  // A closed iterator's tree, kept while the version and memtables it reads are current, serves
  // again: a seek-and-read-one loop makes no merging, level and memtable iterators per seek.
  const kept = db.iteratorTrees.take(db);
  let version: Version;
  let tree: InternalIterator;
  let memtables: readonly (MemTable | null)[];
  if (kept !== null) {
    ({ version, tree, memtables } = kept);
  } else {
    version = db.refCurrentVersion();
    memtables = currentMemtables(db);
    tree = buildTree(db, version);
  }
  let keptAgain = false;
  let it: DBIteratorHandle | undefined; // unset if createEntryIterator throws (and releases)
  // The database closes what is still open when it closes (later calls are CLOSED).
  it = createEntryIterator(
    tree,
    sequence,
    resolved,
    () => {
      if (it !== undefined) db.openIterators.released();
      if (!keptAgain) version.unref();
    },
    (internal, healthy) => {
      keptAgain = healthy && db.iteratorTrees.keep(db, { tree: internal, version, memtables });
      if (!keptAgain) internal.close();
    },
  );
  db.openIterators.add(it);
  return it;
}

/**
 * Level iterators drop their file's iterator as they close it, so theirs go back to the table for
 * the next (TableIteratorOptions.recycle): a seek-and-read-one loop makes no table iterator per seek.
 */
const RECYCLED: TableIteratorOptions = { recycle: true };

/** Every region's memtable and immutable memtable, in order: what a tree reads besides tables. */
function currentMemtables(db: DBImpl): (MemTable | null)[] {
  const out: (MemTable | null)[] = [];
  for (const region of db.regions) out.push(region.mem, region.imm);
  return out;
}

/** The merged view of every region's memtables and `version`'s tables (version referenced by the caller). */
function buildTree(db: DBImpl, version: Version): InternalIterator {
  const children: InternalIterator[] = [];
  try {
    db.regions.forEach((region, r) => {
      children.push(new MemTableInternalIterator(region.mem));
      if (region.imm !== null) children.push(new MemTableInternalIterator(region.imm));
      const tables = db.tables[r]!;
      // Level-0 files overlap: one lazy "level" each, so a seek its filter rules out opens nothing.
      for (const file of version.files(r, 0)) {
        const one = [file];
        children.push(new LevelIterator(one, () => tables.newIterator(file, RECYCLED), undefined, (_, probes) => tables.fileMayMatch(file, probes)));
      }
      for (let level = 1; level < NUM_LEVELS; level++) {
        const files = version.files(r, level);
        if (files.length > 0) {
          children.push(new LevelIterator(files, (i) => tables.newIterator(files[i]!, RECYCLED), undefined, (i, probes) => tables.fileMayMatch(files[i]!, probes)));
        }
      }
    });
  } catch (err) {
    for (const c of children) c.close();
    version.unref();
    throw err;
  }
  return new MergingIterator(children);
}

/** What OpenIterators asks of an iterator (EntryIterator has it). */
export interface EndableIterator {
  readonly closed: boolean;
  /** Closes it for the database's close: its later calls are CLOSED. */
  end(): void;
}

/**
 * The database's iterators that may still be open, which its close ends. Each is appended when
 * made and counted off when it closes; the closed ones are dropped from the list in a sweep once
 * they make up most of it. So an iterator costs no allocation of its own here: a Set's add and
 * delete rehash its table, ~100 ns and 120 bytes per iterator of a seek-and-read-one loop.
 */
export class OpenIterators<T extends EndableIterator = EntryIterator> {
  #list: T[] = [];
  #open = 0;

  /** Iterators made and not yet closed. */
  get size(): number {
    return this.#open;
  }

  /** Iterators listed, open or closed and not yet swept: at most twice `size` and SWEEP_SLACK more. */
  get tracked(): number {
    return this.#list.length;
  }

  add(it: T): void {
    this.#list.push(it);
    this.#open++;
    this.#sweepIfDue();
  }

  /** One of them closed (its release ran: it counts no more). */
  released(): void {
    this.#open--;
    this.#sweepIfDue();
  }

  /** Ends every one still open (the database closes); the list is then empty. */
  endAll(): void {
    const list = this.#list;
    this.#list = [];
    for (const it of list) if (!it.closed) it.end();
  }

  #sweepIfDue(): void {
    if (this.#list.length > 2 * this.#open + SWEEP_SLACK) this.#list = this.#list.filter((x) => !x.closed);
  }
}

/**
 * Closed iterators the open list may hold beyond twice the open ones before it is swept: with
 * few open, a sweep (a new array) every 64 iterators made, not every one.
 */
const SWEEP_SLACK = 64;

interface KeptTree {
  readonly tree: InternalIterator;
  /** Referenced for the tree while it is kept (the next iterator takes the reference over). */
  readonly version: Version;
  readonly memtables: readonly (MemTable | null)[];
}

/**
 * One closed iterator's tree (merging iterator and children), kept for the next iterator while it
 * still reads the database's current state: the same version and the same memtables (a write to
 * the memtable is seen: every use starts with a seek). A tree kept pins its version's files and
 * its memtables, so it is dropped as soon as either changes (a flush, a compaction or a memtable
 * switch installs a version; the database calls `drop` then, and on close). It is parked when
 * kept (`park`: its level iterators close their open files), so it holds no table, block or
 * readahead window. Only a tree whose iterator met no error is kept.
 */
export class IteratorTrees {
  #kept: KeptTree | null = null;

  /** The kept tree if it reads `db`'s current state (taken: the caller owns it and its version reference); else null (a stale one is dropped). */
  take(db: DBImpl): KeptTree | null {
    const kept = this.#kept;
    if (kept === null) return null;
    this.#kept = null;
    if (isCurrent(db, kept)) return kept;
    release(kept);
    return null;
  }

  /** Keeps `tree` (and its version reference) if none is kept and it reads `db`'s current state; false: the caller closes it. */
  keep(db: DBImpl, tree: KeptTree): boolean {
    if (this.#kept !== null || db.closed || !isCurrent(db, tree)) return false;
    // Kept, it holds no table open, no block and no readahead: only its own structure.
    try {
      tree.tree.park?.();
    } catch {
      return false; // the caller closes it
    }
    this.#kept = tree;
    return true;
  }

  /** Closes the kept tree, if any, and lets its version go. */
  drop(): void {
    const kept = this.#kept;
    this.#kept = null;
    if (kept !== null) release(kept);
  }
}

function isCurrent(db: DBImpl, kept: KeptTree): boolean {
  if (kept.version !== db.currentVersion) return false;
  const regions = db.regions;
  for (let r = 0; r < regions.length; r++) {
    if (kept.memtables[2 * r] !== regions[r]!.mem || kept.memtables[2 * r + 1] !== regions[r]!.imm) return false;
  }
  return true;
}

/**
 * Closes a kept tree and lets its version go. A close error is dropped: a parked tree has no
 * table open (`park`), and this runs where nothing could report it (a version's install, the
 * database's close, an unrelated iterator's open).
 */
function release(kept: KeptTree): void {
  try {
    kept.tree.close();
  } catch {
    // see above
  } finally {
    kept.version.unref();
  }
}
