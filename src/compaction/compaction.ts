/**
 * The merge of a compaction (LevelDB's DoCompactionWork): reads the input tables through one
 * merged iterator, drops what no reader can see, and writes output tables. Runs on whatever
 * thread calls it — the compaction worker, or the database's thread when no worker is available —
 * and touches nothing but the files it is given: the caller turns the result into a VersionEdit.
 *
 * What is kept. Live snapshots s0 < s1 < … < sk−1 cut each key's history into stripes: stripe i
 * holds the entries with s(i−1) < seq ≤ si, stripe k those newer than every snapshot. A reader at
 * a snapshot sees the newest entry of its stripe (or of an older one), so the merge keeps the
 * newest entry of each stripe and drops the rest (LevelDB keeps every version newer than the
 * oldest snapshot; with several snapshots this keeps less). A deletion marker in stripe 0 — seen
 * by every reader — is dropped too once no deeper level can hold the key: nothing is left for it
 * to hide.
 *
 * Output files are cut at `maxFileSize`, and early when the output would overlap more than
 * GRANDPARENT_OVERLAP_FACTOR files' worth of the level below the output level, but never between
 * two entries of one user key: a level ≥ 1 must not spread one key over two files.
 */
import { corruption } from '../errors.js';
import type { FileSystem, WritableFile } from '../fs/file-system.js';
import type { FilterPolicy } from '../filter/policy.js';
import { compareByteRanges } from '../format/bytes.js';
import {
  encodeInternalKey,
  INTERNAL_KEY_TRAILER_SIZE,
  MAX_SEQUENCE,
  readSequence,
  readValueType,
  VALUE_TYPE_FOR_SEEK,
  ValueType,
} from '../format/internal-key.js';
import { bytewiseInternalComparator } from '../format/internal-key-comparator.js';
import type { InternalIterator } from '../iterator/internal-iterator.js';
import { LevelIterator } from '../iterator/level-iterator.js';
import { MergingIterator } from '../iterator/merging-iterator.js';
import type { CompressionType } from '../sstable/compression.js';
import type { FilterScope } from '../options.js';
import { TableBuilder } from '../sstable/table-builder.js';
import { MERGE_MAX_WINDOW } from '../sstable/readahead.js';
import { TableCache } from '../sstable/table-cache.js';
import type { TableIterator, TableIteratorOptions } from '../sstable/table-iterator.js';
import { tableFileName } from '../version/filenames.js';
import { compareInternal, sharedPrefixLength } from '../version/version.js';
import type { FileMetaData } from '../version/version-edit.js';
import { GRANDPARENT_OVERLAP_FACTOR } from './picker.js';
import { isStopped, JobAbandoned, STOP_CHECK_INTERVAL, type StopFlag } from './stop-flag.js';
import { runSteps, STEP_ENTRIES, type JobSteps } from './job-steps.js';

/** A file's key range (internal keys) and size: what the merge needs of files it does not read. */
export interface FileRange {
  readonly smallest: Uint8Array;
  readonly largest: Uint8Array;
  readonly fileSize: number;
}

export interface CompactionTask {
  /** The region's directory: inputs are read and outputs written there. */
  readonly dir: string;
  /** The level outputs go to (inputs come from it and the level above). */
  readonly outputLevel: number;
  /** Level-0 inputs (each may overlap the others; newest first) or the upper level's inputs. */
  readonly upper: readonly FileMetaData[];
  readonly upperIsLevel0: boolean;
  /** Inputs at the output level, sorted and disjoint. */
  readonly lower: readonly FileMetaData[];
  /** Files of the level below the output level that overlap the inputs. */
  readonly grandparents: readonly FileRange[];
  /** For each level deeper than the output level, its files in order (for dropping deletions). */
  readonly deeper: readonly (readonly FileRange[])[];
  /** Live snapshot sequences, ascending. */
  readonly snapshots: readonly number[];
  /**
   * Numbers reserved for the outputs, used in order (see outputBound). Once they run out the last
   * output takes the rest and grows past maxFileSize: outputs can outgrow any estimate (a database
   * reopened with weaker compression or a bigger filter), and a larger file beats a failed merge.
   */
  readonly outputNumbers: readonly number[];
  readonly maxFileSize: number;
  readonly blockSize: number;
  readonly blockRestartInterval: number;
  readonly compression: CompressionType;
  readonly filterPolicy: FilterPolicy | null;
  /** The whole-table filter's policy (filter scopes 'table' and 'both'); null: `filterPolicy`'s. */
  readonly tableFilterPolicy?: FilterPolicy | null;
  readonly filterScope: FilterScope;
  readonly verifyChecksums: boolean;
  /**
   * A subcompaction: only user keys in [begin, end) are merged (undefined: unbounded). The parts
   * of one merge split it at user keys, so no key's versions are spread over two parts.
   */
  readonly begin?: Uint8Array;
  readonly end?: Uint8Array;
}

export interface CompactionOutcome {
  readonly outputs: FileMetaData[];
  readonly bytesRead: number;
  readonly bytesWritten: number;
  readonly entriesIn: number;
  readonly entriesOut: number;
}

/**
 * How many output numbers a compaction can need: a cut per maxFileSize of output, one per
 * grandparent, plus one. `outputBytes` is an estimate (the inputs' sizes, or their uncompressed
 * sizes when larger); running out costs a large last file, not the merge.
 */
export function outputBound(outputBytes: number, maxFileSize: number, grandparents: number): number {
  return Math.ceil(outputBytes / maxFileSize) + grandparents + 2;
}

/** Tells whether a user key may have data in levels deeper than the output (keys ascend). */
class BaseLevelCheck {
  readonly #levels: readonly (readonly FileRange[])[];
  readonly #next: number[];

  constructor(levels: readonly (readonly FileRange[])[]) {
    this.#levels = levels;
    this.#next = levels.map(() => 0);
  }

  /** True if no deeper level's key range holds `key[0, len)`. Calls must come in ascending key order. */
  isBaseLevelFor(key: Uint8Array, len: number): boolean {
    for (let l = 0; l < this.#levels.length; l++) {
      const files = this.#levels[l]!;
      let i = this.#next[l]!;
      while (i < files.length && compareByteRanges(key, 0, len, files[i]!.largest, 0, files[i]!.largest.length - INTERNAL_KEY_TRAILER_SIZE) > 0) i++;
      this.#next[l] = i;
      if (i < files.length && compareByteRanges(key, 0, len, files[i]!.smallest, 0, files[i]!.smallest.length - INTERNAL_KEY_TRAILER_SIZE) >= 0) {
        return false;
      }
    }
    return true;
  }
}

/**
 * Runs the merge; on failure removes every output it created and rethrows. So it does, throwing
 * JobAbandoned, once `stop` is set (the database is closing; see stop-flag.ts).
 */
export function runCompaction(fs: FileSystem, task: CompactionTask, stop?: StopFlag): CompactionOutcome {
  return runSteps(compactionSteps(fs, task, stop));
}

/**
 * How a merge is run, and so what it may wait for. `'inline'`: to the end without waiting on a
 * promise (runSteps, on the database's thread), so each output table is fdatasynced as it is
 * finished. `'yielding'`: by runStepsYielding (a worker's), which waits between steps and answers
 * from the promise chain the steps end in, so a finished table's fdatasync runs on libuv's thread
 * pool while the next is written, and an abandoned merge closes its removed outputs after it has
 * answered (MergeOutputs).
 */
export type MergeRun = 'inline' | 'yielding';

/** Background fdatasyncs a merge lets run at once: one table's, while it writes the next. */
const MAX_BACKGROUND_SYNCS = 1;

/**
 * The output tables of one merge, opened in turn from the task's reserved numbers. `finish`
 * completes the open one (last blocks, filters, fdatasync); `abandon` drops them all.
 *
 * Run `'yielding'` (a merge on a worker, which can wait without blocking) a finished
 * table's fdatasync runs on libuv's thread pool while the merge writes the next table, and
 * `syncsDone` waits for them all: the merge answers only once every output is durable. On
 * 1,000,000 batched overwrites the worker spent 7% of its time in those fdatasyncs. Between
 * steps the merge waits while more than MAX_BACKGROUND_SYNCS are in flight (`syncBacklog`): the
 * pool is the process's, and an asynchronous WAL sync of the database's thread queues behind
 * whatever it holds.
 *
 * An abandoned merge unlinks its outputs while it holds each open (`abandon`): on ext4 an unlink
 * of a closed, synced 2 MiB table frees its blocks there and then (2.5 ms each, more behind a
 * journal commit), and a merge a closing database stopped took 12-68 ms to remove its outputs
 * before answering. Unlinked while open, the blocks are freed at the last close instead, which a
 * worker does after answering.
 */
class MergeOutputs {
  readonly files: FileMetaData[] = [];
  /** The table being written, or null between tables. */
  builder: TableBuilder | null = null;
  #file: WritableFile | null = null;
  #nextNumber = 0;
  readonly #fs: FileSystem;
  readonly #task: CompactionTask;
  readonly #stop: StopFlag | undefined;
  readonly #run: MergeRun;
  /** Background fdatasyncs, oldest first (each closes its file when done); they never reject: a failure goes to #syncError. */
  readonly #syncs: Promise<void>[] = [];
  #syncError: unknown = null;

  constructor(fs: FileSystem, task: CompactionTask, stop: StopFlag | undefined, run: MergeRun) {
    this.#fs = fs;
    this.#task = task;
    this.#stop = stop;
    this.#run = run;
  }

  /**
   * A promise of every background fdatasync not yet waited for having ended (it never rejects:
   * `throwIfSyncFailed` tells), or undefined if none is left.
   */
  syncsDone(): Promise<void> | undefined {
    if (this.#syncs.length === 0) return undefined;
    return Promise.all(this.#syncs.splice(0)).then(() => undefined);
  }

  /** The oldest background fdatasync, to wait for while more than MAX_BACKGROUND_SYNCS are in flight; else undefined. */
  syncBacklog(): Promise<void> | undefined {
    return this.#syncs.length > MAX_BACKGROUND_SYNCS ? this.#syncs.shift() : undefined;
  }

  /** Throws the first background fdatasync's failure, if one failed. */
  throwIfSyncFailed(): void {
    if (this.#syncError !== null) throw this.#syncError;
  }

  #syncInBackground(file: WritableFile): void {
    const closeQuietly = (): void => {
      try {
        file.close();
      } catch (err) {
        this.#syncError ??= err;
      }
    };
    this.#syncs.push(
      file.syncAsync().then(closeQuietly, (err: unknown) => {
        this.#syncError ??= err;
        closeQuietly();
      }),
    );
  }

  /** True while a reserved number is left for another table. */
  get canCut(): boolean {
    return this.#nextNumber < this.#task.outputNumbers.length;
  }

  open(): TableBuilder {
    const task = this.#task;
    const number = task.outputNumbers[this.#nextNumber++];
    if (number === undefined) throw new Error('compaction ran out of reserved output file numbers');
    const file = this.#fs.createWritable(tableFileName(task.dir, number));
    this.#file = file;
    this.builder = new TableBuilder(file, {
      blockSize: task.blockSize,
      blockRestartInterval: task.blockRestartInterval,
      compression: task.compression,
      ...(task.filterPolicy !== null ? { filterPolicy: task.filterPolicy } : {}),
      ...(task.tableFilterPolicy != null ? { tableFilterPolicy: task.tableFilterPolicy } : {}),
      filterScope: task.filterScope,
    });
    this.files.push({ number, fileSize: 0, smallest: new Uint8Array(0), largest: new Uint8Array(0) });
    return this.builder;
  }

  finish(): void {
    // Finishing a table (its last blocks, filters, an fdatasync) is the longest step the loop
    // cannot look at the stop flag in: look before it.
    if (isStopped(this.#stop)) throw new JobAbandoned();
    const b = this.builder!;
    b.finish();
    if (this.#run === 'yielding') {
      this.#syncInBackground(this.#file!);
    } else {
      this.#file!.sync();
      this.#file!.close();
    }
    const last = this.files[this.files.length - 1]!;
    this.files[this.files.length - 1] = { number: last.number, fileSize: b.fileSize, smallest: b.smallestKey!.slice(), largest: b.largestKey!.slice() };
    this.builder = null;
    this.#file = null;
  }

  /**
   * After a failure, with no fdatasync in flight (`syncsDone`): removes every table written.
   * With `closeLater` (a worker's, which runs it after the job has answered), each finished table
   * is opened again before its name goes, and closed there (see the class comment).
   */
  abandon(closeLater?: (close: () => void) => void): void {
    const open: { close(): void }[] = [];
    try {
      this.builder?.abandon();
    } catch {
      // already failing
    }
    if (this.#file !== null) open.push(this.#file);
    this.#file = null;
    for (const o of this.files) {
      const path = tableFileName(this.#task.dir, o.number);
      if (closeLater !== undefined && o.fileSize > 0) {
        try {
          open.push(this.#fs.openReadable(path));
        } catch {
          // removed below all the same, at the unlink's cost
        }
      }
      this.#fs.remove(path);
    }
    const close = (): void => {
      for (const file of open) {
        try {
          file.close();
        } catch {
          // already failing; its name is gone
        }
      }
    };
    if (closeLater === undefined) close();
    else closeLater(close);
  }
}

/**
 * The merge loop (LevelDB's DoCompactionWork body): the per-entry decisions — where to cut an
 * output, which entries to drop — over the merged input. A class of its own, apart from the
 * generator that drives it: V8 optimizes `advance` once per worker, where a generator holding the
 * loop was recompiled whole each time a job first took one of its rarer paths.
 */
class MergeLoop {
  entriesIn = 0;
  entriesOut = 0;
  readonly #input: InternalIterator;
  readonly #outputs: MergeOutputs;
  readonly #stop: StopFlag | undefined;
  readonly #snapshots: readonly number[];
  readonly #base: BaseLevelCheck;
  readonly #grandparents: readonly FileRange[];
  readonly #overlapLimit: number;
  readonly #maxFileSize: number;
  readonly #end: Uint8Array | undefined;
  #gpIndex = 0;
  #gpSeenKey = false;
  #gpOverlap = 0;
  #cutPending = false;
  #currentKey = new Uint8Array(64);
  #currentLen = -1; // no current user key yet
  #lastStripe = -1;

  constructor(task: CompactionTask, input: InternalIterator, outputs: MergeOutputs, stop: StopFlag | undefined) {
    this.#input = input;
    this.#outputs = outputs;
    this.#stop = stop;
    this.#snapshots = task.snapshots;
    this.#base = new BaseLevelCheck(task.deeper);
    this.#grandparents = task.grandparents;
    this.#overlapLimit = GRANDPARENT_OVERLAP_FACTOR * task.maxFileSize;
    this.#maxFileSize = task.maxFileSize;
    this.#end = task.end;
  }

  /** Merges up to `limit` more input entries; false once the input (or the task's range) ends. */
  advance(limit: number): boolean {
    const input = this.#input;
    const outputs = this.#outputs;
    const snapshots = this.#snapshots;
    const grandparents = this.#grandparents;
    const end = this.#end;
    for (let n = 0; n < limit; n++, input.next()) {
      if (!input.valid()) return false;
      const key = input.key();
      const userLen = key.length - INTERNAL_KEY_TRAILER_SIZE;
      if (end !== undefined && compareByteRanges(key, 0, userLen, end, 0, end.length) >= 0) return false;
      if (++this.entriesIn % STOP_CHECK_INTERVAL === 0 && isStopped(this.#stop)) throw new JobAbandoned();

      // Would this key make the current output overlap too much of the grandparent level?
      while (this.#gpIndex < grandparents.length && compareInternal(key, grandparents[this.#gpIndex]!.largest) > 0) {
        if (this.#gpSeenKey) this.#gpOverlap += grandparents[this.#gpIndex]!.fileSize;
        this.#gpIndex++;
      }
      this.#gpSeenKey = true;
      if (this.#gpOverlap > this.#overlapLimit) {
        this.#cutPending = true;
        this.#gpOverlap = 0;
      }

      const c = this.#currentLen < 0 ? 1 : compareByteRanges(key, 0, userLen, this.#currentKey, 0, this.#currentLen);
      if (c !== 0) {
        // The merged input ascends unless an input table is itself out of order (damage the
        // merging iterator cannot see): CORRUPTION, before a table is built of it.
        if (c < 0) throw corruption("compaction input out of order: an input table's keys are not sorted");
        this.#startUserKey(key, userLen);
      }
      const seq = readSequence(key, key.length);
      let stripe = 0;
      while (stripe < snapshots.length && seq > snapshots[stripe]!) stripe++;
      let drop = false;
      if (stripe === this.#lastStripe) {
        drop = true; // a newer entry of this key in the same stripe hides it from every reader
      } else if (readValueType(key, key.length) === ValueType.DELETION && stripe === 0 && this.#base.isBaseLevelFor(key, userLen)) {
        drop = true; // a deletion every reader sees, with nothing below it left to hide
      }
      this.#lastStripe = stripe;
      if (drop) continue;
      (outputs.builder ?? outputs.open()).add(key, input.value());
      this.entriesOut++;
    }
    return true;
  }

  /** A new user key: the place to cut the output, if one is due (never between a key's entries). */
  #startUserKey(key: Uint8Array, userLen: number): void {
    const outputs = this.#outputs;
    // A grandparent stop met while no output is open is forgotten (LevelDB's ShouldStopBefore
    // does the same): kept pending, it would cut the next output right after its first key.
    if (outputs.builder === null) this.#cutPending = false;
    else if (outputs.canCut && (this.#cutPending || outputs.builder.fileSize >= this.#maxFileSize)) {
      outputs.finish();
      this.#cutPending = false;
    }
    if (this.#currentKey.length < userLen) this.#currentKey = new Uint8Array(userLen * 2);
    const currentKey = this.#currentKey;
    for (let i = 0; i < userLen; i++) currentKey[i] = key[i]!;
    this.#currentLen = userLen;
    this.#lastStripe = -1;
  }
}

/**
 * Runs `close` after the job has answered: a job run yielding (on a worker) answers from the
 * promise chain its generator ends in, which settles before the event loop's next check phase.
 */
const afterAnswer = (close: () => void): void => void setImmediate(close);

/** An input table's iterator: one window per input (readahead.ts), so a smaller one. */
const INPUT_OPTIONS: TableIteratorOptions = { maxReadahead: MERGE_MAX_WINDOW };

/** `runCompaction` as steps (job-steps.ts): it yields every STEP_ENTRIES input entries. */
export function* compactionSteps(fs: FileSystem, task: CompactionTask, stop?: StopFlag, run: MergeRun = 'inline'): JobSteps<CompactionOutcome> {
  const tables = new TableCache(fs, task.dir, { capacity: 1000, verifyChecksums: task.verifyChecksums });
  const children: InternalIterator[] = [];
  const outputs = new MergeOutputs(fs, task, stop, run);
  try {
    let bytesRead = 0;
    for (const f of task.upper) bytesRead += f.fileSize;
    for (const f of task.lower) bytesRead += f.fileSize;
    const open = (f: FileMetaData): TableIterator => tables.newIterator(f.number, f.fileSize, INPUT_OPTIONS);
    if (task.upperIsLevel0) {
      for (const f of task.upper) children.push(open(f));
    } else if (task.upper.length > 0) {
      const upper = task.upper;
      children.push(new LevelIterator(upper, (i) => open(upper[i]!)));
    }
    if (task.lower.length > 0) {
      const lower = task.lower;
      children.push(new LevelIterator(lower, (i) => open(lower[i]!)));
    }
    const inputs = [...task.upper, ...task.lower];
    const sharedPrefix = inputs.length === 0 ? new Uint8Array(0) : inputs[0]!.smallest.slice(0, sharedPrefixLength(inputs));
    const input = new MergingIterator(children, bytewiseInternalComparator, { sharedPrefix });
    if (task.begin === undefined) input.seekToFirst();
    else input.seek(encodeInternalKey(task.begin, MAX_SEQUENCE, VALUE_TYPE_FOR_SEEK));
    const loop = new MergeLoop(task, input, outputs, stop);
    while (loop.advance(STEP_ENTRIES)) yield outputs.syncBacklog();
    input.close();
    if (outputs.builder !== null) outputs.finish();
    const synced = outputs.syncsDone();
    if (synced !== undefined) yield synced;
    outputs.throwIfSyncFailed();
    // The outputs' names must be durable before the MANIFEST names them.
    if (outputs.files.length > 0) fs.syncDir(task.dir);
    const bytesWritten = outputs.files.reduce((s, o) => s + o.fileSize, 0);
    return { outputs: outputs.files, bytesRead, bytesWritten, entriesIn: loop.entriesIn, entriesOut: loop.entriesOut };
  } catch (err) {
    for (const c of children) {
      try {
        c.close();
      } catch {
        // already failing
      }
    }
    // The background fdatasyncs end before the files go: none may be in flight on a closed descriptor.
    const synced = outputs.syncsDone();
    if (synced !== undefined) yield synced;
    // A merge a closing database stopped answers before its outputs' blocks are freed (MergeOutputs).
    outputs.abandon(err instanceof JobAbandoned && run === 'yielding' ? afterAnswer : undefined);
    throw err;
  } finally {
    tables.close();
  }
}
