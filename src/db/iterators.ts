/**
 * Builds the user's iterator: one merged view of every region's memtables and tables, pinned
 * (the version is referenced until the iterator closes, so compaction keeps its files) and read
 * at one sequence number (the snapshot's, or the newest at creation). The database keeps a set of
 * the open ones and ends them when it closes.
 */
import { invalidArgument } from '../errors.js';
import { createEntryIterator, type EntryIterator } from '../iterator/entry-iterator.js';
import type { InternalIterator } from '../iterator/internal-iterator.js';
import { resolveIteratorOptions, type IteratorRangeOptions } from '../iterator/iterator-options.js';
import { LevelIterator } from '../iterator/level-iterator.js';
import { MemTableInternalIterator } from '../iterator/memtable-iterator.js';
import { MergingIterator } from '../iterator/merging-iterator.js';
import { NUM_LEVELS } from '../version/version-edit.js';
import type { DBImpl } from './db-impl.js';
import { Snapshot } from './snapshot.js';

export interface IteratorOptions extends IteratorRangeOptions {
  /** Iterate the database as it was when the snapshot was taken. */
  snapshot?: Snapshot;
}

export type DBIteratorHandle = EntryIterator;

export function openIterator(db: DBImpl, options: IteratorOptions): DBIteratorHandle {
  if (options === null || typeof options !== 'object') throw invalidArgument('iterator options must be an object');
  const { snapshot, ...range } = options;
  const resolved = resolveIteratorOptions(range);
  let sequence = db.lastSequence;
  if (snapshot !== undefined) {
    if (!(snapshot instanceof Snapshot)) throw invalidArgument('option snapshot must come from db.snapshot()');
    snapshot.check(db.snapshots);
    sequence = snapshot.sequence;
  }
  const version = db.refCurrentVersion();
  const children: InternalIterator[] = [];
  try {
    db.regions.forEach((region, r) => {
      children.push(new MemTableInternalIterator(region.mem));
      if (region.imm !== null) children.push(new MemTableInternalIterator(region.imm));
      const tables = db.tables[r]!;
      // Level-0 files overlap: one lazy "level" each, so a seek its filter rules out opens nothing.
      for (const file of version.files(r, 0)) {
        const one = [file];
        children.push(new LevelIterator(one, () => tables.newIterator(file), undefined, (_, probes) => tables.fileMayMatch(file, probes)));
      }
      for (let level = 1; level < NUM_LEVELS; level++) {
        const files = version.files(r, level);
        if (files.length > 0) {
          children.push(new LevelIterator(files, (i) => tables.newIterator(files[i]!), undefined, (i, probes) => tables.fileMayMatch(files[i]!, probes)));
        }
      }
    });
  } catch (err) {
    for (const c of children) c.close();
    version.unref();
    throw err;
  }
  // The database closes what is still open when it closes (later calls are CLOSED).
  const it = createEntryIterator(new MergingIterator(children), sequence, resolved, () => {
    db.openIterators.delete(it);
    version.unref();
  });
  db.openIterators.add(it);
  return it;
}
