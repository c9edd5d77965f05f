/**
 * The background worker thread: runs flush and compaction jobs (jobs.ts) with the real file
 * system and posts each result, or its error, back on the port it was given. Keeps nothing of a
 * job once it has answered but the files a merge abandoned at close lets go of just after its
 * answer (compaction.ts MergeOutputs); the database's thread decides everything and installs the
 * results.
 *
 * Its first message says it is ready (runner.ts WorkerReady): the runner posts jobs only then, so
 * a worker that fails to start has run none of them.
 */
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { NodeFileSystem } from '../fs/node-fs.js';
import { executeJobYielding } from './jobs.js';
import { turn } from './job-steps.js';
import { serializeError } from './job-errors.js';
import type { JobAnswer, JobMessage, WorkerData, WorkerReady, WorkerShutdown } from './runner.js';

const { port, priority } = workerData as WorkerData;
const fs = new NodeFileSystem();

/**
 * How far `'low'` lowers the thread's priority: nice +10 (a tenth of a normal thread's share of a
 * busy core). RocksDB's LowerThreadPoolCPUPriority goes to 19, where a merge beside a busy
 * process could starve while writers wait for it.
 */
const LOW_PRIORITY_NICE = 10;

/**
 * Lowers this thread's CPU priority by LOW_PRIORITY_NICE (at most to nice 19). On Linux a thread
 * has its own nice value, set through its thread id, read from /proc/thread-self (Node has no
 * gettid; not a database file, so not through the FileSystem seam). Elsewhere, or where it is
 * refused, the thread keeps the process's priority.
 */
function lowerPriority(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid) || tid <= 0) return;
    setPriority(tid, Math.min(19, getPriority(tid) + LOW_PRIORITY_NICE));
  } catch {
    // not Linux, or not permitted: the process's priority
  }
}

if (priority === 'low') lowerPriority();

// Merges run one at a time, in order, though each lets the event loop turn between its steps
// (job-steps.ts): the next merge's message waits in this chain. A flush starts at once, and a
// running merge pauses at its next step until no flush runs (LevelDB's compaction loop writes a
// waiting memtable first, too): writers wait for a flush, and the flush worker also runs the second
// part of a split level-0 merge (db/background.ts), which takes several times as long.
let previous: Promise<void> = Promise.resolve();
let flushesRunning = 0;
let mergesHeld: (() => void)[] = [];

async function mergeTurn(): Promise<void> {
  await turn();
  while (flushesRunning > 0) await new Promise<void>((resolve) => mergesHeld.push(resolve));
}

async function run(message: JobMessage, between: () => Promise<void>): Promise<void> {
  let answer: JobAnswer;
  try {
    answer = { id: message.id, result: await executeJobYielding(fs, message.job, message.stop, between) };
  } catch (err) {
    answer = { id: message.id, error: serializeError(err) };
  }
  // Once answered, this thread no longer reads a flush's memtable: a shared arena goes back to the
  // database's pool when the flush is installed (memtable/arena-pool.ts).
  port.postMessage(answer);
}

/** `run` answers every error itself; one it could not answer (postMessage failing) ends the worker as an uncaught exception, and the runner fails its jobs and starts a new one. */
function rethrowLater(err: unknown): void {
  setImmediate(() => {
    throw err;
  });
}

parentPort!.on('message', (message: JobMessage | WorkerShutdown) => {
  if ('shutdown' in message) {
    // Every job has answered. The thread ends once nothing is left to run: what an abandoned
    // merge closes after its answer (compaction.ts MergeOutputs) runs first.
    parentPort!.close();
    port.close();
    return;
  }
  if (message.job.kind === 'flush') {
    flushesRunning++;
    run(message, turn)
      .finally(() => {
        if (--flushesRunning > 0) return;
        const held = mergesHeld;
        mergesHeld = [];
        for (const resume of held) resume();
      })
      .catch(rethrowLater);
    return;
  }
  previous = previous.then(() => run(message, mergeTurn)).catch(rethrowLater);
});
port.postMessage({ ready: true } satisfies WorkerReady);
