/**
 * A runner's stop flag: how a closing database abandons the background job that is running.
 *
 * One Int32 cell on a SharedArrayBuffer, so a job on a worker thread sees it set while it runs
 * (it crosses `postMessage` shared, not copied). The database's thread sets it once, when the
 * database closes; it is never cleared. A job looks at it before it starts, every
 * STOP_CHECK_INTERVAL entries and before it finishes a table, and once it is set throws
 * JobAbandoned: the job's own failure
 * cleanup removes every file it created, and executeJob (jobs.ts) answers `{ kind: 'abandoned' }`
 * (LevelDB's DoCompactionWork checks shutting_down_ per key the same way).
 *
 * Nothing of an abandoned job is installed, so nothing is lost: a merge's inputs stay live, and a
 * flush's memtable stays in its WAL — the MANIFEST's log number is not advanced — for the next
 * open to replay. Closing is not an error: nothing is latched.
 */

export type StopFlag = Int32Array;

export function newStopFlag(): StopFlag {
  return new Int32Array(new SharedArrayBuffer(4));
}

export function setStopFlag(stop: StopFlag): void {
  Atomics.store(stop, 0, 1);
}

export function isStopped(stop: StopFlag | undefined): boolean {
  return stop !== undefined && Atomics.load(stop, 0) !== 0;
}

/**
 * Entries a job writes between two looks at its stop flag: about a millisecond of merging, so a
 * close waits about that long for a running job (or for the table it is finishing, if it already
 * began to: its filters, last blocks and fdatasync).
 */
export const STOP_CHECK_INTERVAL = 1024;

/** Thrown inside a job that saw its stop flag (see the file header). */
export class JobAbandoned extends Error {
  constructor() {
    super('the job was abandoned: the database is closing');
    this.name = 'JobAbandoned';
  }
}
