/**
 * A job's loop cut into steps, so a worker can let its event loop turn between them.
 *
 * Why: a native codec (lz4-napi for LZ4 blocks over 64 KiB, snappy; before lz4-wasm-encoder.ts,
 * lz4-napi for every LZ4 block) returns each compressed block in a native buffer whose memory
 * Node frees only from the event loop (the finalizers of native buffers run in an immediate
 * callback). A flush or merge written as one synchronous loop turned its worker's event loop only
 * when it ended, so every block it compressed stayed allocated until then, and each new block
 * landed on fresh pages: 1,000,000 batched writes and as many overwrites peaked 45 MB higher in
 * RSS, and a block's compression cost up to twice as much (BENCHMARKS.md, issue 10 session 6).
 *
 * A job's loop is a generator that yields every STEP_ENTRIES entries. `runSteps` drives it to the
 * end at once (jobs run on the database's thread, which may not yield: a synchronous writer waits
 * for them); `runStepsYielding`, on a worker, lets the event loop run between steps.
 */

/** Entries between steps: about 250 KB of db_bench's 124-byte entries, some 60 compressed blocks. */
export const STEP_ENTRIES = 2048;

/**
 * A step yields nothing, or a promise the job must wait for before its next step (only a job
 * started to run yielding may: a merge's background fdatasyncs, compaction.ts).
 */
export type JobSteps<T> = Generator<void | Promise<void>, T, void>;

/** Runs every step now, on this thread; returns the job's result. */
export function runSteps<T>(steps: JobSteps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
    if (r.value !== undefined) throw new Error('a job run synchronously yielded a promise');
  }
}

/** One turn of the event loop. */
export const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Runs the steps with `between()` awaited after each one (on a worker thread): by default a turn
 * of the event loop; a worker may also hold a merge there while a flush runs (worker.ts).
 */
export async function runStepsYielding<T>(steps: JobSteps<T>, between: () => Promise<void> = turn): Promise<T> {
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
    if (r.value !== undefined) await r.value;
    await between();
  }
}
