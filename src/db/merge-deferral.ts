/**
 * When a merge that no writer waits for should wait for the database's reads to pause
 * (Options.deferMergesDuringReads).
 *
 * On a machine of few cores a merge takes a reader's core: the worker's thread, and V8's helper
 * threads compiling the worker's code, run beside the thread that reads. Right after an open that
 * found level 0 due for a merge, 250,000 `getSync`s of absent keys took 5.8 µs each with the merge
 * running and 3.1 without (two cores; BENCHMARKS.md, sessions 24 and 27). So a merge that only
 * tidies (no write since the last look, level 0 below the slowdown trigger) waits while reads keep
 * coming, and starts at the first look that finds no read since the one GRACE_MS or more before
 * it (50-100 ms after the last read), at the first look after a write, or once it has waited its
 * limit, about as long as the merge would take to run (its input bytes at MERGE_BYTES_PER_MS,
 * between GRACE_MS and LIMIT_MS). A merge out of level 0 makes each read consult fewer tables
 * afterwards; one between deeper levels leaves fewer older versions for an iterator to read past
 * (right after an overwrite, level 1 holding most keys again made bench/db's seeks a third
 * slower). Waiting about as long as the merge runs is the ski rental's rule, which bounds what
 * waiting costs the reads by what the merge costs them, if a millisecond of either slows them
 * alike (not measured: a merge beside them cost a miss about +85%).
 *
 * MergeDeferral is the decision alone, over what the caller reads: the clock, a count of reads
 * made so far, the last sequence number (which moves with every write); it returns the delay
 * after which to look again. DeferredWork adds the timer that does look again.
 */

import { performance } from 'node:perf_hooks';

/**
 * How long without a read counts as a pause, in ms: also how often a put-off merge is looked at.
 * A pause is short next to a merge (a level-0 merge of bench/db's database runs for seconds) and
 * long next to a read loop's gaps (microseconds between gets, a turn of the event loop between
 * awaited ones).
 */
export const GRACE_MS = 50;
/** The most a merge waits, in ms, however large its input. */
export const LIMIT_MS = 5000;
/**
 * The most the open's flush of replayed memtables waits (Background.holdFlush), in ms: reading a
 * replayed memtable costs about what reading its level-0 table would, so longer than a merge;
 * bounded, so a process that reads without a pause still frees the WALs it holds.
 */
export const FLUSH_LIMIT_MS = 10_000;
/**
 * The merge rate assumed for a merge's limit: input bytes per ms. On the development
 * machine (two cores) an overwrite's 28 merges read 307 MB while its worker had no idle time, about
 * 13 s: ~25 MB/s (BENCHMARKS.md, session 28, "Disk after fillrandom + overwrite").
 */
export const MERGE_BYTES_PER_MS = 25_000;

let assumedRate = MERGE_BYTES_PER_MS;

/**
 * @internal For tests: the merge rate deferralLimitMs assumes, in input bytes per ms (a test's
 * small merges then wait as long as a large one would). Module state: one test file's.
 */
export function assumeMergeRate(bytesPerMs: number): void {
  assumedRate = bytesPerMs;
}

/** The longest a merge reading `inputBytes` waits for reads to pause, in ms. */
export function deferralLimitMs(inputBytes: number): number {
  return Math.min(LIMIT_MS, Math.max(GRACE_MS, inputBytes / assumedRate));
}

export class MergeDeferral {
  /** When the waiting merge was first put off (-1: none waits). */
  #since = -1;
  /** The read count and the time at the start of the current grace period. */
  #readsAt = 0;
  #checkedAt = 0;
  /** The last sequence number seen (-1 before the first look: that one is the baseline). */
  #sequence = -1;

  /**
   * Whether a merge with waiting limit `limitMs` may start at `now`: 0 if so, else how many ms
   * later to ask again. `reads` counts the reads made so far, `sequence` is the database's last
   * sequence number.
   */
  decide(now: number, reads: number, sequence: number, limitMs: number): number {
    const wrote = this.#sequence >= 0 && sequence !== this.#sequence;
    this.#sequence = sequence;
    if (wrote) return this.#start();
    if (this.#since < 0) {
      this.#since = now;
      this.#readsAt = reads;
      this.#checkedAt = now;
      return GRACE_MS;
    }
    if (now - this.#since >= limitMs) return this.#start();
    if (now - this.#checkedAt >= GRACE_MS) {
      if (reads === this.#readsAt) return this.#start(); // a whole grace period without a read
      this.#readsAt = reads;
      this.#checkedAt = now;
    }
    return Math.max(1, Math.min(GRACE_MS - (now - this.#checkedAt), limitMs - (now - this.#since)));
  }

  /** Takes `sequence` as the one last seen (the open's: writes after it count as writes). */
  observe(sequence: number): void {
    this.#sequence = sequence;
  }

  /** A merge starts now (decided here, or for a reason the caller knows of): the next one waits afresh. */
  started(): void {
    this.#since = -1;
  }

  /** True while a merge is being put off. */
  get waiting(): boolean {
    return this.#since >= 0;
  }

  #start(): number {
    this.#since = -1;
    return 0;
  }
}

/**
 * A MergeDeferral with the timer that looks again when it says: one per kind of work put off
 * (merges; the open's flush). The timer is unref'd: it keeps no process alive.
 */
export class DeferredWork {
  readonly #deferral = new MergeDeferral();
  #timer: NodeJS.Timeout | null = null;

  /**
   * True if the work may start now (MergeDeferral.decide); else `lookAgain` is scheduled for when
   * the deferral says, unless a look is already scheduled.
   */
  mayStart(reads: number, sequence: number, limitMs: number, lookAgain: () => void): boolean {
    const wait = this.#deferral.decide(performance.now(), reads, sequence, limitMs);
    if (wait === 0) return true;
    if (this.#timer === null) {
      this.#timer = setTimeout(() => {
        this.#timer = null;
        lookAgain();
      }, wait);
      this.#timer.unref();
    }
    return false;
  }

  /** See MergeDeferral.observe. */
  observe(sequence: number): void {
    this.#deferral.observe(sequence);
  }

  /** The work starts for a reason of the caller's: the next waits afresh, and no look is left scheduled. */
  started(): void {
    this.#deferral.started();
    this.cancel();
  }

  /** Drops the scheduled look, if any (close). */
  cancel(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
