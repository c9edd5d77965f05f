/**
 * Where background jobs run. `WorkerRunner` runs them on a worker thread (the real file system
 * only: a worker cannot see the database thread's in-memory file system); `InlineRunner` runs them
 * on the database's thread, deferred with setImmediate so the same asynchronous hand-over is
 * exercised (tests on MemFileSystem; custom filter policies, which cannot be sent to a worker).
 *
 * Contract: `submit` starts a job and calls `done` exactly once, on the database's thread, with
 * the result or the error — never synchronously inside `submit`. `waitSync` blocks until every
 * submitted job's `done` has been called: for a synchronous caller (a sync-twin write) that must
 * not go on until a flush has finished. Jobs of one runner run one at a time, in order.
 */
import { receiveMessageOnPort, Worker, MessageChannel, type MessagePort } from 'node:worker_threads';
import type { FileSystem } from '../fs/file-system.js';
import { executeJob, type Job, type JobResult } from './jobs.js';
import { deserializeError, type SerializedError } from './job-errors.js';

export type JobCallback = (err: unknown, result?: JobResult) => void;

export interface JobRunner {
  submit(job: Job, done: JobCallback): void;
  waitSync(): void;
  /** Jobs submitted and not yet done. */
  readonly pending: number;
  close(): Promise<void>;
}

export class InlineRunner implements JobRunner {
  readonly #queue: { job: Job; done: JobCallback }[] = [];
  #scheduled = false;

  constructor(readonly fs: FileSystem) {}

  get pending(): number {
    return this.#queue.length;
  }

  submit(job: Job, done: JobCallback): void {
    this.#queue.push({ job, done });
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => {
        this.#scheduled = false;
        this.#runOne();
        if (this.#queue.length > 0) {
          this.#scheduled = true;
          setImmediate(() => {
            this.#scheduled = false;
            this.waitSync();
          });
        }
      });
    }
  }

  #runOne(): void {
    const next = this.#queue.shift();
    if (next === undefined) return;
    let result: JobResult;
    try {
      result = executeJob(this.fs, next.job);
    } catch (err) {
      next.done(err);
      return;
    }
    next.done(undefined, result);
  }

  waitSync(): void {
    while (this.#queue.length > 0) this.#runOne();
  }

  async close(): Promise<void> {
    this.waitSync();
  }
}

const sleepCell = new Int32Array(new SharedArrayBuffer(4));
/** A flush takes well under a second per MiB of memtable; two minutes means the worker is gone. */
const WAIT_SYNC_LIMIT_MS = 2 * 60 * 1000;

/**
 * Starts worker.js beside this file. Run from TypeScript sources (tests, tsx), the worker is
 * bootstrapped through tsx's loader: Node 20 does not apply `--import` hooks to worker threads.
 */
function newWorker(port: MessagePort): Worker {
  const options = { workerData: { port }, transferList: [port] };
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./worker.js', import.meta.url), options);
  const entry = JSON.stringify(new URL('./worker.ts', import.meta.url).href);
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${entry}); })`;
  return new Worker(bootstrap, { ...options, eval: true });
}

export class WorkerRunner implements JobRunner {
  #worker: Worker | null = null;
  #port: MessagePort | null = null;
  readonly #waiting = new Map<number, JobCallback>();
  #nextId = 1;

  get pending(): number {
    return this.#waiting.size;
  }

  #start(): { worker: Worker; port: MessagePort } {
    if (this.#worker !== null) return { worker: this.#worker, port: this.#port! };
    const { port1, port2 } = new MessageChannel();
    const worker = newWorker(port2);
    port1.on('message', (m: { id: number; result?: JobResult; error?: SerializedError }) => this.#deliver(m));
    worker.on('error', (err) => this.#failAll(err));
    worker.on('exit', (code) => {
      if (this.#waiting.size > 0) this.#failAll(new Error(`compaction worker exited with code ${code}`));
      this.#worker = null;
      this.#port = null;
    });
    worker.unref();
    port1.unref();
    this.#worker = worker;
    this.#port = port1;
    return { worker, port: port1 };
  }

  #deliver(m: { id: number; result?: JobResult; error?: SerializedError }): void {
    const done = this.#waiting.get(m.id);
    if (done === undefined) return;
    this.#waiting.delete(m.id);
    if (this.#waiting.size === 0) {
      this.#worker?.unref();
      this.#port?.unref();
    }
    if (m.error !== undefined) done(deserializeError(m.error));
    else done(undefined, m.result);
  }

  #failAll(err: unknown): void {
    const callbacks = [...this.#waiting.values()];
    this.#waiting.clear();
    for (const done of callbacks) done(err);
  }

  submit(job: Job, done: JobCallback): void {
    const { worker, port } = this.#start();
    const id = this.#nextId++;
    this.#waiting.set(id, done);
    // Keep the process alive while a job runs, so its result is installed before exit.
    worker.ref();
    port.ref();
    worker.postMessage({ id, job });
  }

  /**
   * Blocks (sleeping 1 ms at a time) until every job is done. A worker's exit cannot be seen while
   * the thread is blocked, so a job that gives no answer for WAIT_SYNC_LIMIT_MS fails instead.
   */
  waitSync(): void {
    const deadline = Date.now() + WAIT_SYNC_LIMIT_MS;
    while (this.#waiting.size > 0) {
      const m = this.#port === null ? undefined : receiveMessageOnPort(this.#port);
      if (m !== undefined) this.#deliver(m.message);
      else if (this.#worker === null || Date.now() > deadline) this.#failAll(new Error('background worker did not answer'));
      else Atomics.wait(sleepCell, 0, 0, 1);
    }
  }

  async close(): Promise<void> {
    while (this.#waiting.size > 0) await new Promise((r) => setImmediate(r));
    const worker = this.#worker;
    this.#worker = null;
    this.#port?.close();
    this.#port = null;
    if (worker !== null) await worker.terminate();
  }
}
