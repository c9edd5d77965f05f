/**
 * Background work of a database: memtable flushes and leveled compactions, run on worker threads
 * (or inline, see compaction/runner.ts), with their results installed on the database's thread.
 *
 * - Flush. `startFlush` takes the regions' immutable memtables (switched by the write path) and
 *   writes each to a level-0 table on the flush runner. When every region's table is written, one
 *   VersionEdit adds them and advances the log number past the WAL they came from; the memtables
 *   are dropped and the old WAL deleted. One flush at a time: a writer that fills the next
 *   memtable meanwhile waits (`whenFlushed`, or `waitFlushSync` for a synchronous writer).
 * - Compaction. After every install, `maybeCompact` asks the picker (compaction/picker.ts) for each
 *   region; a move is installed at once, a merge goes to the compaction runner — its own worker,
 *   so a flush waits behind a long merge only for the second part of a split one (below). Output
 *   file numbers are reserved in
 *   `pendingOutputs` so that obsolete-file deletion never removes a table being written.
 * - Manual. `compactRange` pauses automatic compaction, flushes, then compacts each level of the
 *   range into the next, down to the deepest level holding data there. Manual compactions queue
 *   behind each other (one chain): each picks its inputs only once the one before it is installed.
 *
 * A level-0 merge started while writers are slowed down runs in two parts at once, split at a user
 * key, the second on the flush worker (RocksDB's subcompactions): writers at the slowdown or stop
 * trigger are waiting for exactly that merge, and the second core would otherwise sit idle.
 *
 * Invariants. At most one merge runs at a time, and no compaction is chosen whose inputs a running
 * merge holds (`#beingCompacted`): two merges of one file would both install, and the second
 * install would find its inputs gone. Every job ends in exactly one of: installed, failed
 * (latched), discarded because an error was latched meanwhile — after a latched error nothing
 * is installed (LevelDB stops all background work at bg_error_): the MANIFEST may be what failed,
 * and the WAL still holds whatever a discarded flush held — or abandoned because the database
 * closes (stop-flag.ts): the job stops mid-way and removes its files, nothing is installed and
 * nothing latched; a merge's inputs stay live and a flush's WAL stays for the next open to replay.
 * A job that finished before the close is still installed.
 *
 * Failures (a disk error, a corrupt input table) are latched as the database's background error:
 * writes fail with it, reads go on, and the files of the failed job are removed.
 */
import { performance } from 'node:perf_hooks';
import { filterChoice, policySpec } from '../compaction/policy-spec.js';
import { pickCompaction, pickRangeCompaction, type CompactionChoice } from '../compaction/picker.js';
import type { FlushJob, JobResult, TableShape } from '../compaction/jobs.js';
import { outputBound } from '../compaction/compaction.js';
import { InlineRunner, WorkerRunner, type JobRunner } from '../compaction/runner.js';
import type { SieveError } from '../errors.js';
import type { FileSystem } from '../fs/file-system.js';
import { INTERNAL_KEY_TRAILER_SIZE } from '../format/internal-key.js';
import { NodeFileSystem } from '../fs/node-fs.js';
import type { ResolvedOptions } from '../options.js';
import { tableFileName } from '../version/filenames.js';
import type { Version } from '../version/version.js';
import { VersionEdit, NUM_LEVELS, type FileMetaData } from '../version/version-edit.js';
import type { VersionSet } from '../version/version-set.js';
import type { InfoLog } from './info-log.js';
import type { Region } from './region.js';
import type { SnapshotList } from './snapshot.js';
import { DeferredWork, deferralLimitMs, FLUSH_LIMIT_MS } from './merge-deferral.js';
import type { DBStats } from './stats.js';
import type { TableAccess } from './table-access.js';

/**
 * A level-0 merge reading at least this many output files' worth (its inputs' sizes, or
 * uncompressed sizes when larger) may run in two parts at once; a smaller one is done before a
 * second part would pay off. 4 × maxFileSize: 8 MiB by default.
 */
const SUBCOMPACTION_MIN_FILES = 4;

/** What background work needs of the database. */
export interface BackgroundHost {
  readonly options: ResolvedOptions;
  readonly versions: VersionSet;
  readonly regions: readonly Region[];
  readonly tables: readonly TableAccess[];
  readonly snapshots: SnapshotList;
  readonly stats: DBStats;
  readonly info: InfoLog;
  /** Latches `err` as the background error and returns it. */
  latch(err: unknown): SieveError;
  /** True once a background error is latched or the database is closing. */
  stopped(): boolean;
  /** The latched background error, or null (closing is not an error: a job finishing during close is still installed). */
  backgroundError(): SieveError | null;
  deleteObsoleteFiles(): void;
}

/** Per-level compaction figures for `sievekv.stats`. */
export interface LevelWork {
  compactions: number;
  bytesRead: number;
  bytesWritten: number;
  /** Wall time of those compactions, from start to install (LevelDB's "Time(sec)"). */
  micros: number;
}

export class BackgroundWork {
  readonly #host: BackgroundHost;
  readonly #flushRunner: JobRunner;
  readonly #compactRunner: JobRunner;
  readonly #shape: TableShape;
  /** Table numbers being written by a job: not yet in any version, not to be deleted. */
  readonly pendingOutputs = new Set<number>();
  /** levelWork[region][level]: compactions into that level since open. */
  readonly levelWork: LevelWork[][];
  /** Numbers of the input tables of the running merge (file numbers are unique across regions). */
  readonly #beingCompacted = new Set<number>();
  #flushing = false;
  #compacting = false;
  /** Merges settled (installed, failed, abandoned or discarded) since open: waitCompactionSync's clock. */
  #mergesSettled = 0;
  /** Manual compactions running or queued: automatic compaction waits while any is. */
  #manualCount = 0;
  /** The end of the manual-compaction chain: the next compactRange starts once it settles. */
  #manualTail: Promise<void> = Promise.resolve();
  #closing = false;
  #waiters: (() => void)[] = [];
  /** Whether a merge no writer waits for waits for reads to pause (merge-deferral.ts). */
  readonly #mergeDeferral = new DeferredWork();
  /**
   * The log number of the flush of the memtables an open replayed while it is put off for reads
   * (holdFlush), or 0. Meanwhile `flushing` is true, as it will be once the flush starts.
   */
  #heldFlush = 0;
  /** Whether the held flush is to wait longer (merge-deferral.ts). */
  readonly #flushDeferral = new DeferredWork();

  constructor(host: BackgroundHost) {
    this.#host = host;
    this.levelWork = host.regions.map(() => Array.from({ length: NUM_LEVELS }, () => ({ compactions: 0, bytesRead: 0, bytesWritten: 0, micros: 0 })));
    const options = host.options;
    // A worker sees only the real file system, and only built-in policies can cross to it; a
    // user's own policy object travels only to inline jobs.
    const useWorkers =
      options.fs instanceof NodeFileSystem && policySpec(options.filterPolicy) !== undefined && policySpec(options.tableFilterPolicy) !== undefined;
    this.#shape = {
      blockSize: options.blockSize,
      blockRestartInterval: options.blockRestartInterval,
      compression: options.compression,
      filter: filterChoice(options.filterPolicy),
      tableFilter: filterChoice(options.tableFilterPolicy),
      filterScope: options.filterScope,
    };
    // A worker that cannot start says so in the LOG, and its jobs run on this thread instead.
    const report = (message: string): void => host.info.log(message);
    const priority = options.backgroundPriority;
    this.#flushRunner = useWorkers ? new WorkerRunner({ name: 'flush', fs: options.fs, report, priority }) : new InlineRunner(options.fs);
    // One worker runs every job; a second (backgroundThreads 2) the merges, and with the first the
    // two parts of a split level-0 merge.
    this.#compactRunner = !useWorkers
      ? new InlineRunner(options.fs)
      : options.backgroundThreads === 1
        ? this.#flushRunner
        : new WorkerRunner({ name: 'compaction', fs: options.fs, report, priority });
    this.#inline = !useWorkers;
  }

  readonly #inline: boolean;

  /** Whether jobs run on this thread (in-memory file system, or a custom filter policy). */
  get inline(): boolean {
    return this.#inline;
  }

  /** How this database's tables are built (also by recovery's flush). */
  get shape(): TableShape {
    return this.#shape;
  }

  /** True while a flush runs or is held (holdFlush): a writer that needs the memtables switched waits for it. */
  get flushing(): boolean {
    return this.#flushing;
  }

  get compacting(): boolean {
    return this.#compacting;
  }

  /** Resolves at the next install (flush or compaction) or failure. */
  whenProgress(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  #notify(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  /** True once a background error is latched: from then on no job's result is installed. */
  #errorLatched(): boolean {
    return this.#host.backgroundError() !== null;
  }

  /**
   * Removes tables a job wrote that no VersionEdit ever named (the job's result was discarded):
   * no MANIFEST can name them. Best effort: a reopen removes what is left.
   */
  #removeUnnamed(dir: string, numbers: readonly number[]): void {
    const fs: FileSystem = this.#host.options.fs;
    for (const n of numbers) {
      try {
        fs.remove(tableFileName(dir, n));
      } catch {
        // left for the next open's obsolete-file deletion
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Flush

  /**
   * For the open: `startFlush(logNumber)` for the memtables it replayed, put off like a merge no
   * writer waits for (merge-deferral.ts, with FLUSH_LIMIT_MS: reading a replayed memtable costs
   * about what reading its table would) unless `deferMergesDuringReads` is off. It starts once
   * reads pause, a write comes (the next look sees it), or a writer needs it: the write path's
   * prestart, and every wait for a flush (a full memtable, `flush()`), starts it first.
   */
  holdFlush(logNumber: number): void {
    if (!this.#host.options.deferMergesDuringReads) {
      this.startFlush(logNumber);
      return;
    }
    this.#heldFlush = logNumber;
    this.#flushing = true;
    this.#lookAtHeldFlush();
  }

  /** Starts the held flush if the deferral says so, else looks again when it says. */
  #lookAtHeldFlush(): void {
    if (this.#heldFlush === 0 || this.#closing) return;
    if (this.#flushDeferral.mayStart(this.#readCount(), this.#host.versions.lastSequence, FLUSH_LIMIT_MS, () => this.#lookAtHeldFlush())) this.#releaseHeldFlush();
  }

  /** Starts the held flush now, if there is one. */
  #releaseHeldFlush(): void {
    const logNumber = this.#heldFlush;
    if (logNumber === 0 || this.#closing) return;
    this.#heldFlush = 0;
    this.#flushDeferral.started();
    this.#flushing = false;
    this.startFlush(logNumber);
  }

  /**
   * Writes every region's immutable memtable to a level-0 table in the background. `logNumber` is
   * the WAL that the fresh memtables write to: once installed, older WALs are obsolete.
   */
  startFlush(logNumber: number): void {
    const host = this.#host;
    const regions = host.regions.filter((r) => r.imm !== null && r.imm.count > 0);
    const edit = new VersionEdit();
    edit.logNumber = logNumber;
    edit.prevLogNumber = 0; // every WAL before logNumber is obsolete once this installs, LevelDB's old "previous log" too
    this.#flushing = true;
    if (regions.length === 0) {
      this.#installFlush(edit, []);
      return;
    }
    let left = regions.length;
    let failed: unknown;
    let abandoned = false;
    const started = performance.now();
    const numbers: number[] = [];
    for (const region of regions) {
      const number = host.versions.newFileNumber();
      numbers.push(number);
      this.pendingOutputs.add(number);
      const imm = region.imm!;
      const job: FlushJob = {
        kind: 'flush',
        dir: region.dir,
        number,
        entries: this.#inline ? imm : imm.exportState(),
        shape: this.#shape,
      };
      this.#flushRunner.submit(job, (err, result) => {
        if (err !== undefined) failed ??= err;
        else if (result?.kind === 'flush') {
          edit.addFile(0, result.file, region.index);
          // A flush's time counts in level 0's row (LevelDB's), its bytes in stats.bytesFlushed.
          this.levelWork[region.index]![0]!.micros += Math.round((performance.now() - started) * 1000);
          host.stats.flushes++;
          host.stats.bytesFlushed += result.file.fileSize;
          host.info.log(`flushed region ${region.index} memtable (${imm.count} entries) to table ${number} (${result.file.fileSize} bytes)`);
        } else abandoned = true;
        if (--left > 0) return;
        if (failed !== undefined) {
          for (const n of numbers) this.pendingOutputs.delete(n);
          this.#flushing = false;
          host.latch(failed);
          this.#notify();
          return;
        }
        if (abandoned) this.#discardFlush(edit, numbers, 'the database is closing');
        else this.#installFlush(edit, numbers);
      });
    }
  }

  /**
   * Ends a flush without installing it: the tables it wrote are removed; the memtables stay (reads
   * go on) and so does their WAL, which the MANIFEST still calls live: a reopen replays it.
   */
  #discardFlush(edit: VersionEdit, numbers: number[], why: string): void {
    const host = this.#host;
    host.info.log(`flush to tables ${numbers.join(', ') || '(none)'} discarded: ${why}`);
    for (const region of host.regions) {
      const added = edit.newFiles.filter((f) => f.region === region.index).map((f) => f.file.number);
      if (added.length > 0) this.#removeUnnamed(region.dir, added);
    }
    for (const n of numbers) this.pendingOutputs.delete(n);
    this.#flushing = false;
    this.#notify();
  }

  #installFlush(edit: VersionEdit, numbers: number[]): void {
    const host = this.#host;
    if (this.#errorLatched()) {
      this.#discardFlush(edit, numbers, 'a background error is latched');
      return;
    }
    try {
      host.versions.logAndApply(edit);
    } catch (err) {
      host.latch(err);
    } finally {
      for (const n of numbers) this.pendingOutputs.delete(n);
      this.#flushing = false;
    }
    if (!host.stopped()) {
      for (const r of host.regions) {
        r.imm?.retire();
        r.imm = null;
      }
      this.#deleteObsolete();
      this.maybeCompact();
    }
    this.#notify();
  }

  /** Resolves when no flush is running. */
  async whenFlushed(): Promise<void> {
    this.#releaseHeldFlush();
    while (this.#flushing) await this.whenProgress();
  }

  /**
   * Starts the flush worker now if it has not started (WorkerRunner.prestart): writes have begun.
   * With a second worker (backgroundThreads 2), the merges' worker starts at the first merge.
   */
  prestart(): void {
    this.#releaseHeldFlush();
    this.#flushRunner.prestart();
  }

  /**
   * For a writer stalled on a full memtable: the flush it waits for runs on this thread now if it
   * is still held for a flush worker that has not finished starting (WorkerRunner.expedite; held
   * merges stay for the worker).
   */
  expediteFlush(): void {
    this.#releaseHeldFlush();
    this.#flushRunner.expedite();
  }

  /**
   * Installs the flushes and merges that have finished, without waiting: called from the write
   * and read paths, so a thread that never yields to the event loop (a loop of sync calls, or
   * awaits of promises already resolved) does not leave the workers idle with results unread.
   */
  pollSync(): void {
    if (this.#heldFlush !== 0) this.#lookAtHeldFlush();
    this.#flushRunner.poll();
    this.#compactRunner.poll();
    // A compaction scheduled for the next turn of the event loop (at open) starts here if that
    // turn has not come.
    if (!this.#compacting) this.maybeCompact();
  }

  /**
   * Blocks until no flush is running (for synchronous writers): until the running one settles, not
   * through the merge its install may start (a part of which may run on the flush worker).
   */
  waitFlushSync(): void {
    this.#releaseHeldFlush();
    if (this.#flushing) this.#flushRunner.waitSync(() => !this.#flushing);
  }

  /**
   * Blocks until the running merge, if any, settles (for synchronous writers at the L0 stop) — that
   * merge only, not the next one its install starts: the writer looks at level 0 again in between.
   */
  waitCompactionSync(): void {
    if (!this.#compacting) return;
    const settled = this.#mergesSettled;
    const over = (): boolean => this.#mergesSettled !== settled;
    this.#compactRunner.waitSync(over);
    // A merge's second part (#subcompactions) runs on the flush worker.
    if (!over()) this.#flushRunner.waitSync(over);
  }

  // ---------------------------------------------------------------------------------------------
  // Compaction

  /** True if a file holds one version per key and no deletions (moving it keeps no garbage). */
  #isClean(region: number): (f: FileMetaData) => boolean {
    return (f) => {
      try {
        const p = this.#host.tables[region]!.cache.findTable(f.number, f.fileSize).properties;
        return p !== undefined && p.numDeletions === 0 && p.numEntries === p.numUserKeys;
      } catch {
        return false;
      }
    };
  }

  /** True if a running merge holds one of the files `choice` would compact or move. */
  #holdsInputs(choice: CompactionChoice): boolean {
    if (choice.kind === 'none') return false;
    if (choice.kind === 'move') return this.#beingCompacted.has(choice.file.number);
    return choice.inputs.some((files) => files.some((f) => this.#beingCompacted.has(f.number)));
  }

  /**
   * Starts the most urgent compaction, if one is due, no merge runs and no manual compaction is
   * running or queued. Moves are installed at once. A choice whose inputs a running merge holds is
   * passed over (the picker does not know what runs; this is where that is decided).
   */
  maybeCompact(): void {
    if (this.#manualCount === 0) this.#compactWhileDue();
  }

  /**
   * For the end of the open: `maybeCompact` on the next turn of the event loop (LevelDB's open
   * schedules its compaction the same way): picking opens the candidate tables for their
   * properties, work an open need not wait for. A writer that meets a level-0 trigger first starts
   * it itself. The open's last sequence number is the one merges put off for reads compare with:
   * any write after the open makes them due at once (merge-deferral.ts).
   */
  scheduleCompaction(): void {
    const sequence = this.#host.versions.lastSequence;
    this.#mergeDeferral.observe(sequence);
    this.#flushDeferral.observe(sequence);
    setImmediate(() => this.maybeCompact());
  }

  /**
   * For a writer stopped at l0StopTrigger level-0 files: starts the most urgent compaction if no
   * merge runs — even while a manual compaction is queued, which picks its next step from what
   * this one leaves (a synchronous writer cannot wait for the manual chain: it runs only when the
   * thread is free). Returns whether a merge now runs. One that does not means level 0 is below
   * the stop (a move took it down) or nothing can run (an error is latched, the database closes):
   * with level 0 at or past l0CompactionTrigger the picker always finds work.
   */
  startCompactionForStall(): boolean {
    this.#compactWhileDue(true);
    return this.#compacting;
  }

  /**
   * Reads the database's thread has made: gets, and blocks its iterators and gets looked up
   * (a scan's reads count once per block).
   */
  #readCount(): number {
    const stats = this.#host.stats;
    let reads = stats.gets;
    for (const t of stats.regionTables) reads += t.blockCacheHits + t.blocksRead + t.blocksReadFromMemory;
    return reads;
  }

  /**
   * True if `choice` is to wait for reads to pause (merge-deferral.ts), with a look again
   * scheduled. Never for a writer (`urgent`), nor with level 0 at the slowdown trigger, where the
   * next write would wait.
   */
  #deferForReads(choice: Extract<CompactionChoice, { kind: 'merge' }>, urgent: boolean): boolean {
    const host = this.#host;
    const options = host.options;
    if (urgent || !options.deferMergesDuringReads || choice.reason !== 'size') {
      this.#mergeDeferral.started();
      return false;
    }
    const version = host.versions.current;
    if (version.regions[choice.region]![0]!.length >= options.l0SlowdownTrigger) {
      this.#mergeDeferral.started();
      return false;
    }
    let inputBytes = 0;
    for (const files of choice.inputs) for (const f of files) inputBytes += f.fileSize;
    return !this.#mergeDeferral.mayStart(this.#readCount(), host.versions.lastSequence, deferralLimitMs(inputBytes), () => this.maybeCompact());
  }

  #compactWhileDue(urgent = false): void {
    const host = this.#host;
    // A read-only database writes nothing: it never compacts the writer's files.
    if (host.options.readOnly) return;
    while (!this.#compacting && !this.#closing && !host.stopped()) {
      let best: CompactionChoice = { kind: 'none' };
      let bestScore = 0;
      const version = host.versions.current;
      for (let r = 0; r < host.regions.length; r++) {
        const choice = pickCompaction(version, r, host.versions.compactPointers[r]!, host.options, this.#isClean(r));
        if (this.#holdsInputs(choice)) continue;
        const score = choice.kind === 'merge' ? choice.score : choice.kind === 'move' ? Infinity : 0;
        if (choice.kind !== 'none' && score > bestScore) {
          best = choice;
          bestScore = score;
        }
      }
      if (best.kind === 'none') return;
      if (best.kind === 'move') {
        this.#installMove(best);
        continue;
      }
      if (this.#deferForReads(best, urgent)) return;
      this.#runMerge(best, () => this.maybeCompact());
      return;
    }
  }

  #installMove(choice: Extract<CompactionChoice, { kind: 'move' }>): void {
    const host = this.#host;
    if (this.#errorLatched()) return;
    // A move is the level's turn as a merge is: the pointer moves past it (LevelDB's trivial move
    // records the pointer its picker set), so the level's next compaction starts after the file.
    const edit = new VersionEdit()
      .deleteFile(choice.level, choice.file.number, choice.region)
      .addFile(choice.level + 1, choice.file, choice.region)
      .setCompactPointer(choice.level, choice.compactPointer, choice.region);
    try {
      host.versions.logAndApply(edit);
      host.info.log(`moved table ${choice.file.number} of region ${choice.region} from level ${choice.level} to ${choice.level + 1}`);
    } catch (err) {
      host.latch(err);
    }
    this.#notify();
  }

  /**
   * Bytes a merge of `files` may write: each file's size, or its keys and values uncompressed when
   * that is more (the database may now compress less than when the file was written). Tables
   * without properties (LevelDB's) count their size.
   */
  #outputEstimate(region: number, files: readonly FileMetaData[]): number {
    let bytes = 0;
    for (const f of files) {
      let raw = 0;
      try {
        const p = this.#host.tables[region]!.cache.findTable(f.number, f.fileSize).properties;
        if (p !== undefined) raw = p.rawKeySize + p.rawValueSize;
      } catch {
        // A table that cannot be opened fails the merge itself, with its own error.
      }
      bytes += Math.max(f.fileSize, raw);
    }
    return bytes;
  }

  /**
   * Runs one merge on the compaction runner; `then` runs after it is installed, failed or
   * discarded. Requires: no merge running, and none of the choice's inputs held.
   */
  #runMerge(choice: Extract<CompactionChoice, { kind: 'merge' }>, then: () => void): void {
    const host = this.#host;
    const { region, level, inputs, grandparents } = choice;
    if (this.#compacting || this.#holdsInputs(choice)) throw new Error('a merge was started while another holds its inputs');
    const inputNumbers = [...inputs[0], ...inputs[1]].map((f) => f.number);
    for (const n of inputNumbers) this.#beingCompacted.add(n);
    const version: Version = host.versions.current.ref();
    const outputBytes = this.#outputEstimate(region, [...inputs[0], ...inputs[1]]);
    const deeper: FileMetaData[][] = [];
    for (let l = level + 2; l < NUM_LEVELS; l++) deeper.push([...version.files(region, l)]);
    const parts = this.#subcompactions(choice, outputBytes);
    const started = performance.now();
    const outputNumbers: number[][] = parts.map(() =>
      Array.from({ length: outputBound(outputBytes / parts.length, host.options.maxFileSize, grandparents.length) }, () => host.versions.newFileNumber()),
    );
    for (const numbers of outputNumbers) for (const n of numbers) this.pendingOutputs.add(n);
    this.#compacting = true;
    // As LevelDB's "Compacting" line: with the "compacted"/"failed" line that ends it, the LOG
    // shows which merge a crash interrupted.
    host.info.log(
      `compacting region ${region}: ${inputs[0].length}@${level} + ${inputs[1].length}@${level + 1} files (${choice.reason})` +
        (parts.length > 1 ? ` in ${parts.length} parts, split at user keys` : ''),
    );
    const options = host.options;
    const snapshots = host.snapshots.sequences();
    const results: (JobResult | undefined)[] = parts.map(() => undefined);
    let failure: unknown;
    let left = parts.length;
    const settle = (): void => {
      version.unref();
      this.#compacting = false;
      this.#mergesSettled++;
      const abandoned = failure === undefined && results.some((r) => r?.kind === 'abandoned');
      // Outputs of the parts that finished, when the merge as a whole is not installed.
      const written = (): number[] => results.flatMap((r) => (r?.kind === 'compact' ? r.outcome.outputs.map((f) => f.number) : []));
      try {
        if (failure !== undefined) {
          host.latch(failure);
          host.info.log(`compaction of region ${region} level ${level} failed: ${(failure as Error).message}`);
          this.#removeUnnamed(host.regions[region]!.dir, written());
        } else if (abandoned) {
          // Its outputs are removed (a part's by the job itself); its inputs stay live.
          host.info.log(`compaction of region ${region} level ${level} abandoned: the database is closing`);
          this.#removeUnnamed(host.regions[region]!.dir, written());
        } else if (this.#errorLatched()) {
          host.info.log(`compaction of region ${region} level ${level} discarded: a background error is latched`);
          this.#removeUnnamed(host.regions[region]!.dir, written());
        } else this.#installMerge(choice, results as JobResult[], started);
      } finally {
        for (const n of inputNumbers) this.#beingCompacted.delete(n);
        for (const numbers of outputNumbers) for (const n of numbers) this.pendingOutputs.delete(n);
      }
      if (!abandoned) this.#deleteObsolete();
      this.#notify();
      then();
    };
    parts.forEach((part, i) => {
      // The first part on the compaction worker; a second on the flush worker, which is idle
      // while writers wait for level 0 to come down (see #subcompactions).
      const runner = i === 0 ? this.#compactRunner : this.#flushRunner;
      runner.submit(
        {
          kind: 'compact',
          shape: this.#shape,
          task: {
            dir: host.regions[region]!.dir,
            outputLevel: level + 1,
            upper: inputs[0],
            upperIsLevel0: level === 0,
            lower: inputs[1],
            grandparents,
            deeper,
            snapshots,
            outputNumbers: outputNumbers[i]!,
            maxFileSize: options.maxFileSize,
            blockSize: options.blockSize,
            blockRestartInterval: options.blockRestartInterval,
            compression: options.compression,
            filterScope: options.filterScope,
            verifyChecksums: options.verifyChecksums,
            ...(part.begin !== undefined ? { begin: part.begin } : {}),
            ...(part.end !== undefined ? { end: part.end } : {}),
          },
        },
        (err, result) => {
          if (err !== undefined) failure ??= err;
          else results[i] = result;
          if (--left === 0) settle();
        },
      );
    });
  }

  /**
   * How a merge is cut into parts that run at once (RocksDB's subcompactions): a level-0 merge of
   * at least SUBCOMPACTION_MIN_FILES output files' worth, started while level 0 is at the slowdown trigger — writers are
   * slowed or stopped, so the flush worker is idle and the second core would be — is split in two
   * at the smallest user key of the middle output-level input. Each part merges every input, but
   * only its own key range. Otherwise one part, unbounded.
   */
  #subcompactions(choice: Extract<CompactionChoice, { kind: 'merge' }>, outputBytes: number): { begin?: Uint8Array; end?: Uint8Array }[] {
    const lower = choice.inputs[1];
    const l0 = this.#host.versions.current.numFiles(choice.region, 0);
    if (this.#inline || this.#compactRunner === this.#flushRunner || choice.level !== 0 || lower.length < 2 || outputBytes < SUBCOMPACTION_MIN_FILES * this.#host.options.maxFileSize || l0 < this.#host.options.l0SlowdownTrigger) {
      return [{}];
    }
    const middle = lower[lower.length >>> 1]!.smallest;
    const split = middle.slice(0, middle.length - INTERNAL_KEY_TRAILER_SIZE);
    return [{ end: split }, { begin: split }];
  }

  #installMerge(choice: Extract<CompactionChoice, { kind: 'merge' }>, results: readonly JobResult[], started: number): void {
    const host = this.#host;
    const { region, level, inputs } = choice;
    const outcomes = results.flatMap((r) => (r.kind === 'compact' ? [r.outcome] : []));
    if (outcomes.length !== results.length) return;
    const edit = new VersionEdit();
    for (const f of inputs[0]) edit.deleteFile(level, f.number, region);
    for (const f of inputs[1]) edit.deleteFile(level + 1, f.number, region);
    // Parts cover ascending key ranges: their outputs, in part order, are sorted and disjoint.
    for (const o of outcomes) for (const f of o.outputs) edit.addFile(level + 1, f, region);
    edit.setCompactPointer(level, choice.compactPointer, region);
    try {
      host.versions.logAndApply(edit);
    } catch (err) {
      host.latch(err);
      return;
    }
    // Every part reads all the inputs' bytes (each its own key range of them): count them once.
    const bytesRead = outcomes[0]!.bytesRead;
    const bytesWritten = outcomes.reduce((sum, o) => sum + o.bytesWritten, 0);
    const entriesIn = outcomes.reduce((sum, o) => sum + o.entriesIn, 0);
    const entriesOut = outcomes.reduce((sum, o) => sum + o.entriesOut, 0);
    const outputs = outcomes.reduce((sum, o) => sum + o.outputs.length, 0);
    const work = this.levelWork[region]![level + 1]!;
    work.compactions++;
    work.bytesRead += bytesRead;
    work.bytesWritten += bytesWritten;
    work.micros += Math.round((performance.now() - started) * 1000);
    host.info.log(
      `compacted region ${region}: ${inputs[0].length}@${level} + ${inputs[1].length}@${level + 1} files → ${outputs}@${level + 1} ` +
        `(${bytesRead} → ${bytesWritten} bytes, ${entriesIn} → ${entriesOut} entries, ${choice.reason})`,
    );
  }

  #deleteObsolete(): void {
    try {
      this.#host.deleteObsoleteFiles();
    } catch (err) {
      this.#host.info.log(`obsolete file deletion failed: ${(err as Error).message}`);
    }
  }

  /** Resolves when no merge runs. */
  async #whenCompactionIdle(): Promise<void> {
    while (this.#compacting) await this.whenProgress();
  }

  /**
   * Compacts [begin, end] (user keys; undefined = unbounded) of every region down to the deepest
   * level holding data there. The caller has flushed the memtables. Calls queue: each starts once
   * the one before it has settled, and picks its inputs from the version that one left. Resolves
   * early, without an error of its own, once the database stops (the caller reports the latched
   * error).
   */
  compactRange(begin: Uint8Array | undefined, end: Uint8Array | undefined): Promise<void> {
    this.#manualCount++;
    const run = this.#manualTail.then(() => this.#compactRangeNow(begin, end));
    this.#manualTail = run.then(
      () => {},
      () => {},
    );
    return run.finally(() => {
      this.#manualCount--;
      this.maybeCompact();
    });
  }

  async #compactRangeNow(begin: Uint8Array | undefined, end: Uint8Array | undefined): Promise<void> {
    const host = this.#host;
    await this.whenFlushed();
    await this.#whenCompactionIdle(); // a merge that runs may move data deeper: measure after it
    for (let region = 0; region < host.regions.length; region++) {
      // As LevelDB: level 0 always goes down to level 1, deeper data as far as it reaches.
      let deepest = 1;
      for (let level = 1; level < NUM_LEVELS; level++) {
        if (host.versions.current.overlapsLevel(region, level, begin, end)) deepest = level;
      }
      for (let level = 0; level < deepest; level++) {
        for (;;) {
          // An automatic merge started before this call may still run: pick from what it leaves.
          await this.#whenCompactionIdle();
          if (host.stopped() || this.#closing) return;
          const choice = pickRangeCompaction(host.versions.current, region, level, begin, end, host.options);
          if (choice.kind !== 'merge') break;
          await new Promise<void>((resolve) => this.#runMerge(choice, resolve));
        }
      }
    }
  }

  /**
   * Stops background work for a closing database: no job starts from now on; the running flush and
   * merge are abandoned at their next check (nothing of them installed, nothing latched), or
   * installed if they finished first; then the workers stop. Resolves with no job running.
   */
  async close(): Promise<void> {
    this.#closing = true;
    this.#mergeDeferral.cancel();
    // A held flush never starts: its memtables stay in the image close writes, as an abandoned
    // flush's do, and their WALs stay live.
    this.#flushDeferral.cancel();
    await Promise.all([...new Set([this.#flushRunner, this.#compactRunner])].map((runner) => runner.close()));
  }
}
