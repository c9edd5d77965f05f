/**
 * How repair lays out the tables it keeps, and the merge that makes that layout correct.
 *
 * Why not every table at level 0, as LevelDB's repairer does: a point lookup consults level-0
 * tables newest file first and stops at the first that holds the key. That is right only when,
 * for every key, the table holding its newest version comes first — true of level 0 as flushes
 * make it (each table's sequence numbers all above the previous one's), not of tables that came
 * from different levels. Example: level 1 holds {m@55, z@60}, level 2 holds {a@100, m@40} (a@100
 * reached level 2 through a later compaction). Ordered newest first by file number, or by largest
 * sequence, the level-2 table comes first and `get(m)` answers the older m@40. Scans would be
 * right (they merge by sequence); lookups would not, silently.
 *
 * So: `overlapGroups` (a pure decision) partitions a region's tables into groups whose user-key
 * ranges overlap, transitively. A table alone in its group holds the only versions of its keys
 * and is kept as it is. Each larger group is merged (`mergeGroup`) into new tables holding, per
 * user key, only its newest entry (there are no snapshots during a repair), cut near
 * `maxFileSize`, one user key never split over two tables. Groups have disjoint ranges, so every
 * kept table then fits one sorted level, where a lookup finds at most one table.
 *
 * A newest entry that is a deletion is kept, although nothing in the group is left for it to
 * hide: a file that reappears later — an input whose removal failed, then a second repair — must
 * find its older value still hidden. The next compaction into the last level drops it.
 *
 * Inputs are read through a merging iterator over "runs" — tables sorted by key that do not
 * overlap (each of a database's levels is one) — each run through a level iterator that holds one
 * table open at a time; a database's tables form about as many runs as it had level-0 tables
 * plus levels, so a merge holds few files open however many tables it reads.
 */
import { compareByteRanges } from '../format/bytes.js';
import { INTERNAL_KEY_TRAILER_SIZE } from '../format/internal-key.js';
import type { FileSystem } from '../fs/file-system.js';
import type { InternalIterator } from '../iterator/internal-iterator.js';
import { LevelIterator } from '../iterator/level-iterator.js';
import { MergingIterator } from '../iterator/merging-iterator.js';
import { MERGE_MAX_WINDOW } from '../sstable/readahead.js';
import { TableCache } from '../sstable/table-cache.js';
import { tableFileName } from '../version/filenames.js';
import { compareInternal, compareUserKeys } from '../version/version.js';
import { type RepairTable, type TableBuildOptions, TableOutput } from './repair-tables.js';

/**
 * Partitions `tables` (one region's) into groups of transitively overlapping user-key ranges, in
 * key order; each group's tables sorted by smallest key. Pure.
 */
export function overlapGroups(tables: readonly RepairTable[]): RepairTable[][] {
  const sorted = [...tables].sort((a, b) => compareInternal(a.meta.smallest, b.meta.smallest) || a.meta.number - b.meta.number);
  const groups: RepairTable[][] = [];
  let hull: Uint8Array | undefined; // the largest key of the current group
  for (const t of sorted) {
    if (hull !== undefined && compareUserKeys(t.meta.smallest, hull) <= 0) {
      groups[groups.length - 1]!.push(t);
      if (compareInternal(t.meta.largest, hull) > 0) hull = t.meta.largest;
    } else {
      groups.push([t]);
      hull = t.meta.largest;
    }
  }
  return groups;
}

/** Splits `tables` into runs: each sorted by key, its tables not overlapping (internal keys). Pure. */
export function sortedRuns(tables: readonly RepairTable[]): RepairTable[][] {
  const sorted = [...tables].sort((a, b) => compareInternal(a.meta.smallest, b.meta.smallest) || a.meta.number - b.meta.number);
  const runs: RepairTable[][] = [];
  for (const t of sorted) {
    const run = runs.find((r) => compareInternal(r[r.length - 1]!.meta.largest, t.meta.smallest) < 0);
    if (run !== undefined) run.push(t);
    else runs.push([t]);
  }
  return runs;
}

export interface MergeOutcome {
  readonly outputs: RepairTable[];
  /** Entries read from the group. */
  readonly entriesIn: number;
  /** Entries no reader could see: older versions of a key, and copies. */
  readonly superseded: number;
}

/**
 * Merges one group (all in `dir`, region `region`) into new tables numbered by `newNumber`
 * (see the file comment). On failure removes every table it wrote and rethrows.
 */
export function mergeGroup(
  fs: FileSystem,
  dir: string,
  region: number,
  group: readonly RepairTable[],
  newNumber: () => number,
  options: TableBuildOptions,
  maxFileSize: number,
): MergeOutcome {
  const cache = new TableCache(fs, dir, { capacity: 64, verifyChecksums: true });
  const inputOptions = { fillCache: false, maxReadahead: MERGE_MAX_WINDOW }; // one window per run
  const children: InternalIterator[] = sortedRuns(group).map((run) => {
    if (run.length === 1) return cache.newIterator(run[0]!.meta.number, run[0]!.meta.fileSize, inputOptions);
    const files = run.map((t) => t.meta);
    return new LevelIterator(files, (i) => cache.newIterator(files[i]!.number, files[i]!.fileSize, inputOptions));
  });
  const input = new MergingIterator(children);
  const outputs: RepairTable[] = [];
  let output: TableOutput | undefined;
  let entriesIn = 0;
  let superseded = 0;
  let current = new Uint8Array(64);
  let currentLen = -1;
  try {
    for (input.seekToFirst(); input.valid(); input.next()) {
      const key = input.key();
      const userLen = key.length - INTERNAL_KEY_TRAILER_SIZE;
      entriesIn++;
      if (currentLen >= 0 && compareByteRanges(key, 0, userLen, current, 0, currentLen) === 0) {
        superseded++; // an older version (or a copy) of the key just written
        continue;
      }
      if (current.length < userLen) current = new Uint8Array(userLen * 2);
      current.set(key.subarray(0, userLen));
      currentLen = userLen;
      if (output !== undefined && output.fileSize >= maxFileSize) {
        const done = output.finish();
        output = undefined;
        if (done !== undefined) outputs.push(done);
      }
      output ??= new TableOutput(fs, dir, region, newNumber(), options);
      output.add(key, input.value());
    }
    if (output !== undefined) {
      const done = output.finish();
      output = undefined;
      if (done !== undefined) outputs.push(done);
    }
    return { outputs, entriesIn, superseded };
  } catch (err) {
    output?.abandon();
    for (const o of outputs) fs.remove(tableFileName(dir, o.meta.number));
    throw err;
  } finally {
    input.close();
    cache.close();
  }
}
