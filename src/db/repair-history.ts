/**
 * What the MANIFESTs a repair finds still say, damaged or not: every record whose checksum holds
 * and which decodes is a fact that was true when it was written (the files it names were synced
 * first). Repair uses two kinds of fact to leave out files the database had already retired:
 *
 *   - a table whose last mention is a deletion is obsolete (file numbers are never reused; a
 *     move to another level deletes and adds the number in one record, adds last);
 *   - a WAL numbered below a recorded log number was already written to tables.
 *
 * Such a file can still be in the directory when its removal failed (the database logs that and
 * goes on). Replayed or merged, it would bring back values that were deleted since — once a
 * compaction has dropped the deletion, nothing newer hides them. Also reported: a comparator
 * other than the bytewise one, which repair cannot order keys by.
 *
 * Damaged records are skipped (they prove nothing), so the facts are a lower bound: a file a
 * damaged record retired is not known to be obsolete.
 */
import { BYTEWISE_COMPARATOR_NAME } from '../format/comparator.js';
import type { FileSystem } from '../fs/file-system.js';
import { VersionEdit } from '../version/version-edit.js';
import { LogReader } from '../wal/log-reader.js';

export interface ManifestHistory {
  /** A comparator other than the bytewise one, named by a readable record. */
  readonly foreignComparator: { readonly name: string; readonly file: string } | undefined;
  /** Tables whose last mention in a readable record is a deletion. */
  readonly deletedTables: ReadonlySet<number>;
  /** The largest log number a readable record holds (0: none): WALs below it are in tables. */
  readonly logNumber: number;
  /** Previous log numbers recorded (LevelDB's; still live). */
  readonly prevLogNumbers: ReadonlySet<number>;
}

/** Reads every MANIFEST in `paths` (oldest first by file number); unreadable ones add nothing. */
export function readManifestHistory(fs: FileSystem, manifests: readonly { path: string; number: number }[]): ManifestHistory {
  const state = new Map<number, 'live' | 'deleted'>();
  let logNumber = 0;
  const prevLogNumbers = new Set<number>();
  let foreignComparator: ManifestHistory['foreignComparator'];
  for (const { path } of [...manifests].sort((a, b) => a.number - b.number)) {
    let file;
    try {
      file = fs.openReadable(path);
    } catch {
      continue;
    }
    try {
      const reader = new LogReader(file);
      for (let record = reader.readRecord(); record !== null; record = reader.readRecord()) {
        let edit: VersionEdit;
        try {
          edit = VersionEdit.decode(record, path, reader.lastRecordOffset);
        } catch {
          continue;
        }
        if (edit.comparator !== undefined && edit.comparator !== BYTEWISE_COMPARATOR_NAME) foreignComparator ??= { name: edit.comparator, file: path };
        for (const d of edit.deletedFiles) state.set(d.number, 'deleted');
        for (const a of edit.newFiles) state.set(a.file.number, 'live');
        if (edit.logNumber !== undefined && edit.logNumber > logNumber) logNumber = edit.logNumber;
        if (edit.prevLogNumber !== undefined && edit.prevLogNumber !== 0) prevLogNumbers.add(edit.prevLogNumber);
      }
    } catch {
      // An I/O error part-way: what was read stands.
    } finally {
      file.close();
    }
  }
  const deletedTables = new Set<number>();
  for (const [number, s] of state) if (s === 'deleted') deletedTables.add(number);
  return { foreignComparator, deletedTables, logNumber, prevLogNumbers };
}
