/**
 * `db.clear(options)`: deletes every key in a range (at most `limit` of them, from the top with
 * `reverse`) as one write batch of plain deletions — atomic (a reader or snapshot sees all of it
 * or none, and a crash keeps all or none) and readable by LevelDB (no range tombstones). It walks
 * keys only: values are never copied.
 *
 * Order: with no snapshot, every write issued before the clear is made visible first (the writer
 * queue runs, blocking, as for a synchronous write), then the keys are read and the batch is
 * queued with nothing in between, so a write issued before the clear is cleared and one issued
 * after it is not. With a snapshot, the keys are those the snapshot sees (Level's
 * `clear({ snapshot })`); keys written since are kept.
 *
 * The batch holds every key of the range: a range whose deletions encode past `maxBatchSize` is
 * INVALID_ARGUMENT before anything is deleted — clear it in parts with `limit`.
 */
import { invalidArgument } from '../errors.js';
import type { IteratorRangeOptions } from '../iterator/iterator-options.js';
import { WriteBatch } from '../wal/write-batch.js';
import type { DBImpl } from './db-impl.js';
import { openIterator } from './iterators.js';
import type { Snapshot } from './snapshot.js';

/** The options of `db.clear`: a range (as `db.iterator`'s), a snapshot, and `sync` for the write. */
export interface ClearOptions extends Omit<IteratorRangeOptions, 'values'> {
  /** Delete the keys this snapshot sees in the range (not keys written after it). */
  snapshot?: Snapshot;
  /** fdatasync the WAL before the clear resolves. @defaultValue false */
  sync?: boolean;
}

/** A range's deletions, ready to be written, and their number. */
export interface RangeDeletion {
  readonly batch: WriteBatch;
  readonly sync: boolean;
}

/**
 * Reads the keys of the range and encodes their deletions; the caller writes the batch at once
 * (`db.write` or `db.writeSync`), before anything else runs. Throws INVALID_ARGUMENT for bad
 * options or a batch past maxBatchSize, CLOSED after close.
 */
export function prepareRangeDeletion(db: DBImpl, options: ClearOptions | undefined): RangeDeletion {
  const given = options ?? {};
  if (given === null || typeof given !== 'object') throw invalidArgument('clear options must be an object');
  const { sync, ...rangeAndSnapshot } = given;
  if (sync !== undefined && typeof sync !== 'boolean') throw invalidArgument('option sync must be a boolean');
  if ('values' in rangeAndSnapshot) throw invalidArgument('unknown clear option values');
  // Without a snapshot the clear reads the newest state: first let every earlier write land.
  if (rangeAndSnapshot.snapshot === undefined) db.writeSync(new WriteBatch(), false);
  const it = openIterator(db, { ...rangeAndSnapshot, values: false });
  const batch = new WriteBatch();
  const max = db.options.maxBatchSize;
  try {
    for (let entry = it.nextSync(); entry !== undefined; entry = it.nextSync()) {
      batch.del(entry[0]);
      if (batch.byteLength > max) {
        throw invalidArgument(`clear: deleting the range takes more than maxBatchSize (${max} bytes) in one batch; clear it in parts (limit)`);
      }
    }
  } finally {
    it.close();
  }
  return { batch, sync: sync === true };
}
