/**
 * Background jobs — a memtable flush and a compaction merge — as plain, structured-cloneable
 * descriptions, and `executeJob`, which runs one against a file system. The same code runs in the
 * worker (worker.ts) and inline (runner.ts), so both paths write identical tables. A job that
 * sees its runner's stop flag (stop-flag.ts) removes what it wrote and answers 'abandoned'.
 */
import type { FileSystem } from '../fs/file-system.js';
import { MemTable, type MemTableIterator } from '../memtable/memtable.js';
import type { SkipListState } from '../memtable/skiplist.js';
import type { CompressionType } from '../sstable/compression.js';
import type { FilterScope } from '../options.js';
import { TableBuilder } from '../sstable/table-builder.js';
import { ioError } from '../errors.js';
import { tableFileName } from '../version/filenames.js';
import type { FileMetaData } from '../version/version-edit.js';
import { compactionSteps, type CompactionOutcome, type CompactionTask, type MergeRun } from './compaction.js';
import { runSteps, runStepsYielding, STEP_ENTRIES, type JobSteps } from './job-steps.js';
import { policyFromSpec, type FilterChoice } from './policy-spec.js';
import { isStopped, JobAbandoned, STOP_CHECK_INTERVAL, type StopFlag } from './stop-flag.js';

/** How tables are built: the database's options, in a form that crosses threads. */
export interface TableShape {
  readonly blockSize: number;
  readonly blockRestartInterval: number;
  readonly compression: CompressionType;
  /** A spec for jobs sent to a worker; the policy object itself only for inline jobs. */
  readonly filter: FilterChoice;
  /** The whole-table filter's policy (scopes 'table' and 'both'), likewise; `filter`'s when unset. */
  readonly tableFilter?: FilterChoice;
  readonly filterScope: FilterScope;
}

export interface FlushJob {
  readonly kind: 'flush';
  readonly dir: string;
  readonly number: number;
  /** The memtable's entries (MemTable.exportState), or the memtable itself when run inline. */
  readonly entries: SkipListState | MemTable;
  readonly shape: TableShape;
}

export interface CompactJob {
  readonly kind: 'compact';
  readonly task: Omit<CompactionTask, 'filterPolicy' | 'tableFilterPolicy'>;
  readonly shape: TableShape;
}

export type Job = FlushJob | CompactJob;
export type JobResult =
  | { readonly kind: 'flush'; readonly file: FileMetaData }
  | { readonly kind: 'compact'; readonly outcome: CompactionOutcome }
  /** The job saw its stop flag and stopped; the files it created are removed. */
  | { readonly kind: 'abandoned' };

/**
 * Writes the memtable's entries, in order, to table `number` in `dir`, syncs it and its
 * directory; returns its metadata. On failure the partial file is removed and the error rethrown;
 * so it is when `stop` is set meanwhile (JobAbandoned).
 */
export function flushMemTable(fs: FileSystem, dir: string, number: number, it: MemTableIterator, shape: TableShape, stop?: StopFlag): FileMetaData {
  return runSteps(flushSteps(fs, dir, number, it, shape, stop));
}

/** `flushMemTable` as steps (job-steps.ts): it yields every STEP_ENTRIES entries. */
function* flushSteps(fs: FileSystem, dir: string, number: number, it: MemTableIterator, shape: TableShape, stop?: StopFlag): JobSteps<FileMetaData> {
  const path = tableFileName(dir, number);
  const file = fs.createWritable(path);
  const filterPolicy = policyFromSpec(shape.filter);
  const tableFilterPolicy = policyFromSpec(shape.tableFilter ?? shape.filter);
  const builder = new TableBuilder(file, {
    blockSize: shape.blockSize,
    blockRestartInterval: shape.blockRestartInterval,
    compression: shape.compression,
    ...(filterPolicy !== null ? { filterPolicy } : {}),
    ...(tableFilterPolicy !== null ? { tableFilterPolicy } : {}),
    filterScope: shape.filterScope,
  });
  try {
    it.seekToFirst();
    let added = 0;
    while (addEntries(builder, it, STOP_CHECK_INTERVAL)) {
      if (isStopped(stop)) throw new JobAbandoned();
      added += STOP_CHECK_INTERVAL;
      if (added % STEP_ENTRIES === 0) yield;
    }
    if (isStopped(stop)) throw new JobAbandoned(); // before the longest step: filters, last blocks, fdatasync
    builder.finish();
    file.sync();
    file.close();
    // The table's name must be durable before the MANIFEST names it (RocksDB syncs the data
    // directory after a flush; LevelDB does not, and a power cut can then lose the table).
    fs.syncDir(dir);
  } catch (err) {
    try {
      builder.abandon();
      file.close();
    } catch {
      // already failing
    }
    fs.remove(path);
    throw err;
  }
  const smallest = builder.smallestKey;
  const largest = builder.largestKey;
  if (smallest === undefined || largest === undefined) throw ioError('flushed an empty memtable', { file: path });
  return { number, fileSize: builder.fileSize, smallest: smallest.slice(), largest: largest.slice() };
}

/**
 * Adds up to `limit` entries from `it` to `builder`; false once `it` is exhausted. The flush's
 * loop, in a function of its own: V8 optimizes it once per worker, where a generator holding it
 * was recompiled each time a flush first took its finishing path.
 */
function addEntries(builder: TableBuilder, it: MemTableIterator, limit: number): boolean {
  for (let n = 0; n < limit; n++, it.next()) {
    if (!it.valid) return false;
    // The memtable stores each internal key whole, value after it: no copy, no view.
    const keyEnd = it.internalKeyEnd;
    builder.addSlices(it.bytes, it.internalKeyStart, keyEnd, it.bytes, keyEnd, it.valueEnd);
  }
  return true;
}

/** Runs `job` on this thread; 'abandoned' if `stop` is set before or while it runs. */
export function executeJob(fs: FileSystem, job: Job, stop?: StopFlag): JobResult {
  return runSteps(jobSteps(fs, job, stop));
}

/**
 * `executeJob` on a worker thread: the same job, with `between()` (by default a turn of the
 * worker's event loop) every STEP_ENTRIES entries (job-steps.ts says why).
 */
export function executeJobYielding(fs: FileSystem, job: Job, stop?: StopFlag, between?: () => Promise<void>): Promise<JobResult> {
  return runStepsYielding(jobSteps(fs, job, stop, 'yielding'), between);
}

/** `run`: how the steps will be run ('yielding' only by runStepsYielding; compaction.ts MergeRun). */
function* jobSteps(fs: FileSystem, job: Job, stop?: StopFlag, run: MergeRun = 'inline'): JobSteps<JobResult> {
  if (isStopped(stop)) return { kind: 'abandoned' };
  try {
    if (job.kind === 'flush') {
      const it = job.entries instanceof MemTable ? job.entries.iterator() : MemTable.iteratorOf(job.entries);
      return { kind: 'flush', file: yield* flushSteps(fs, job.dir, job.number, it, job.shape, stop) };
    }
    const task = {
      ...job.task,
      filterPolicy: policyFromSpec(job.shape.filter),
      tableFilterPolicy: policyFromSpec(job.shape.tableFilter ?? job.shape.filter),
    };
    return { kind: 'compact', outcome: yield* compactionSteps(fs, task, stop, run) };
  } catch (err) {
    if (err instanceof JobAbandoned) return { kind: 'abandoned' };
    throw err;
  }
}
