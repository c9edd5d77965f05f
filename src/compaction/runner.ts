/**
 * Where background jobs run. `WorkerRunner` runs them on a worker thread (the real file system
 * only: a worker cannot see the database thread's in-memory file system); `InlineRunner` runs them
 * on the database's thread, deferred with setImmediate so the same asynchronous hand-over is
 * exercised (tests on MemFileSystem; custom filter policies, which cannot be sent to a worker).
 *
 * Contract: `submit` starts a job and calls `done` exactly once, on the database's thread, with
 * the result or the error — never synchronously inside `submit`. `waitSync` blocks until every
 * submitted job's `done` has been called, or until its `until` holds (asked after each `done`): for
 * a synchronous caller (a sync-twin write) that must not go on until a flush has finished. A `done`
 * may submit the next job (a merge installed starts the next one): without `until`, the wait goes
 * on through it. Jobs of one runner run one at a time, in order.
 *
 * `close` abandons what is left (stop-flag.ts): it sets the runner's stop flag, so the job running
 * stops at its next check and every job not yet started stops before it begins, each answering
 * `{ kind: 'abandoned' }` (a job that finished first still answers its result); once every `done`
 * has been called it tells the worker to end, which it does once idle (`shutDown`). No job may be
 * submitted after `close`.
 *
 * A worker that cannot start (its entry file missing, a loader it cannot run, worker threads
 * refused) is reported once and replaced by an InlineRunner for the rest of the runner's life:
 * slower, but the database keeps taking writes. Jobs are posted only after the worker says it is
 * ready, so a job the worker never started is safe to run inline; a worker lost after that fails
 * its jobs (their outputs may be half written) and the next job starts a fresh one.
 */
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { receiveMessageOnPort, Worker, MessageChannel, type MessagePort } from 'node:worker_threads';
import type { FileSystem } from '../fs/file-system.js';
import type { BackgroundPriority } from '../options.js';
import { NodeFileSystem } from '../fs/node-fs.js';
import { executeJob, type Job, type JobResult } from './jobs.js';
import { MemTable } from '../memtable/memtable.js';
import { deserializeError, type SerializedError } from './job-errors.js';
import { isStopped, newStopFlag, setStopFlag, type StopFlag } from './stop-flag.js';

export type JobCallback = (err: unknown, result?: JobResult) => void;

export interface JobRunner {
  submit(job: Job, done: JobCallback): void;
  /** Blocks until no job is pending, or until `until()` is true (asked first and after each answer). */
  waitSync(until?: () => boolean): void;
  /**
   * Delivers, without blocking, the answers that have already arrived: a thread that does not
   * yield to the event loop (a loop of sync writes or reads) still installs finished jobs.
   */
  poll(): void;
  /**
   * Starts the runner's worker if it has one not yet started, so that the first job does not wait
   * for its start-up; nothing otherwise.
   */
  prestart(): void;
  /**
   * Runs on this thread, now, the flushes still held for a worker that has not finished starting,
   * while `until` does not hold: for a caller about to wait for one (a writer stalled on a full
   * memtable). Nothing otherwise.
   */
  expedite(until?: () => boolean): void;
  /** Jobs submitted and not yet done. */
  readonly pending: number;
  /** Abandons every job not yet done (each still gets its `done`), then stops; see the file header. */
  close(): Promise<void>;
}

/** Runs `job` on this thread and answers `done`: an InlineRunner's jobs, and those a WorkerRunner expedites. */
function runHere(fs: FileSystem, job: Job, stop: StopFlag, done: JobCallback): void {
  let result: JobResult;
  try {
    result = executeJob(fs, job, stop);
  } catch (err) {
    done(err);
    return;
  }
  done(undefined, result);
}

export class InlineRunner implements JobRunner {
  readonly #queue: { job: Job; done: JobCallback }[] = [];
  #scheduled = false;
  readonly #stop: StopFlag = newStopFlag();

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
    if (next !== undefined) runHere(this.fs, next.job, this.#stop, next.done);
  }

  waitSync(until?: () => boolean): void {
    while (this.#queue.length > 0 && until?.() !== true) this.#runOne();
  }

  /** Nothing arrives on its own here: jobs run when the event loop turns, or in waitSync. */
  poll(): void {}

  /** No worker to start: jobs run on this thread. */
  prestart(): void {}

  /** Nothing is held for a worker: jobs run when the event loop turns, or in waitSync. */
  expedite(_until?: () => boolean): void {}

  /** Jobs queued behind the one running (which, on this thread, has finished) stop before they begin. */
  async close(): Promise<void> {
    setStopFlag(this.#stop);
    this.waitSync();
  }
}

const sleepCell = new Int32Array(new SharedArrayBuffer(4));
/** A flush takes well under a second per MiB of memtable; two minutes means the worker is gone. */
const WAIT_SYNC_LIMIT_MS = 2 * 60 * 1000;
/**
 * A worker starts in well under a second, even from TypeScript sources (tsx compiles them) on a
 * loaded two-core machine; one that has not said it is ready after this long is taken for one that
 * cannot start. Falling back early costs speed, never data: no job was posted to it.
 */
const STARTUP_LIMIT_MS = 15 * 1000;

/** What a worker is started with (worker.ts). */
export interface WorkerData {
  /** Where it posts its answers. */
  readonly port: MessagePort;
  /** `'low'`: it lowers its own CPU priority at start (Options.backgroundPriority). */
  readonly priority: BackgroundPriority;
}

/** The first message a worker posts on its port; every later one answers a job. */
export interface WorkerReady {
  readonly ready: true;
}
/** What the runner posts to its worker: a job, and the runner's stop flag (shared memory) for it to watch. */
export interface JobMessage {
  readonly id: number;
  readonly job: Job;
  readonly stop: StopFlag;
}
/** Posted once by a closing runner, after every job answered: the worker ends once idle. */
export interface WorkerShutdown {
  readonly shutdown: true;
}
/** What the worker posts for each job. */
export interface JobAnswer {
  readonly id: number;
  readonly result?: JobResult;
  readonly error?: SerializedError;
}
type WorkerMessage = WorkerReady | JobAnswer;

/**
 * Starts worker.js beside this file, with `port` for its answers. Run from TypeScript sources
 * (tests, tsx), the worker is bootstrapped through tsx's loader: Node 20 does not apply `--import`
 * hooks to worker threads.
 *
 * `execArgv: []`: the worker runs only sievekv's own modules, which need no flag, and it must not
 * inherit the program's. Some flags make a worker fail at start (`--input-type` outside an eval:
 * ERR_INPUT_TYPE_NOT_ALLOWED on every job), and `--import`/`--require` would run the program's
 * preloads (an agent, a server) inside the compaction thread. Nothing is lost: V8 flags such as
 * `--max-old-space-size` or `--stack-size` are process-wide (a worker may not be given them, and it
 * keeps the process's heap limit without them), and process-wide options apply to it anyway.
 *
 * One exception, for profiling: with SIEVEKV_WORKER_CPU_PROF set to a directory, each worker runs
 * under `--cpu-prof` and leaves its profile there (`node --cpu-prof` profiles the main thread
 * only). BENCHMARKS.md's worker profiles were taken so.
 */
/**
 * A worker's young generation is capped at 8 MiB (V8's default lets it grow to several times
 * that): a job's garbage is short-lived (decoded blocks, keys), and a flush or merge measured no
 * slower with it, while the process's peak RSS over 1,000,000 random batched writes and as many
 * overwrites fell from 364-365 MB to 324-339 MB.
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 8 };

/** How long a closed runner's worker may take to end by itself before it is terminated. */
const SHUTDOWN_LIMIT_MS = 5_000;

/**
 * Tells a closed runner's idle worker to end. One still running at `limitMs` is terminated
 * and `report`ed: whatever descriptors it held then stay open until the process exits.
 */
function shutDown(worker: Worker, name: string, report: (message: string) => void, limitMs: number): void {
  const terminate = (): void => void worker.terminate().catch(() => {});
  try {
    worker.postMessage({ shutdown: true } satisfies WorkerShutdown);
  } catch {
    terminate();
    return;
  }
  const timer = setTimeout(() => {
    report(`the ${name} worker had not ended ${limitMs} ms after close: terminated (descriptors it held stay open until the process exits)`);
    terminate();
  }, limitMs);
  timer.unref();
  worker.once('exit', () => clearTimeout(timer));
}

export function startJobWorker(port: MessagePort, priority: BackgroundPriority = 'normal'): Worker {
  const profileDir = process.env.SIEVEKV_WORKER_CPU_PROF;
  const execArgv = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const workerData: WorkerData = { port, priority };
  const options = { workerData, transferList: [port], execArgv, resourceLimits: WORKER_LIMITS };
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./worker.js', import.meta.url), options);
  const entry = JSON.stringify(new URL('./worker.ts', import.meta.url).href);
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${entry}); })`;
  return new Worker(bootstrap, { ...options, eval: true });
}

export interface WorkerRunnerOptions {
  /** Names the runner's jobs in reports ("flush", "compaction"). @defaultValue 'background' */
  readonly name?: string;
  /**
   * What jobs run on this thread write to: flushes expedited, and every job if the worker cannot
   * start. @defaultValue a NodeFileSystem (the worker's own)
   */
  readonly fs?: FileSystem;
  /** Told once, in a sentence for the LOG, when the worker cannot start and jobs run inline. */
  readonly report?: (message: string) => void;
  /** The worker's CPU priority (Options.backgroundPriority). @defaultValue 'normal' */
  readonly priority?: BackgroundPriority;
  /** Starts the worker (tests substitute one that fails). @defaultValue startJobWorker with `priority` */
  readonly startWorker?: (port: MessagePort) => Worker;
  /** How long a worker may take to say it is ready. @defaultValue STARTUP_LIMIT_MS */
  readonly startupLimitMs?: number;
  /** How long a closed runner's worker may take to end by itself. @defaultValue SHUTDOWN_LIMIT_MS */
  readonly shutdownLimitMs?: number;
}

function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as NodeJS.ErrnoException).code;
  return code !== undefined && !err.message.includes(code) ? `${code}: ${err.message}` : err.message;
}

export class WorkerRunner implements JobRunner {
  readonly #name: string;
  /** Where jobs run on this thread write: expedited flushes, and every job after a fallback. */
  readonly #fs: FileSystem;
  readonly #report: (message: string) => void;
  readonly #startWorker: (port: MessagePort) => Worker;
  readonly #startupLimitMs: number;
  readonly #shutdownLimitMs: number;
  /**
   * Jobs submitted and not yet done, in submission order. A job is kept until it is posted (a
   * fallback may still run it here), then dropped: a memtable copy it holds can be large.
   */
  readonly #waiting = new Map<number, { job: Job | null; done: JobCallback }>();
  #nextId = 1;
  #worker: Worker | null = null;
  #port: MessagePort | null = null;
  /** The worker posted WorkerReady: jobs go to it as they come. Before, they wait in #held. */
  #ready = false;
  #held: number[] = [];
  #startDeadline = 0;
  #startTimer: NodeJS.Timeout | null = null;
  /** Set once the worker could not start; every job from then on runs here. */
  #inline: InlineRunner | null = null;
  #fallbackReason: string | undefined;
  /** Set by `close`; every job posted carries it. */
  readonly #stop: StopFlag = newStopFlag();

  constructor(options: WorkerRunnerOptions = {}) {
    this.#name = options.name ?? 'background';
    this.#fs = options.fs ?? new NodeFileSystem();
    this.#report = options.report ?? (() => {});
    const priority = options.priority ?? 'normal';
    this.#startWorker = options.startWorker ?? ((port) => startJobWorker(port, priority));
    this.#startupLimitMs = options.startupLimitMs ?? STARTUP_LIMIT_MS;
    this.#shutdownLimitMs = options.shutdownLimitMs ?? SHUTDOWN_LIMIT_MS;
  }

  get pending(): number {
    return this.#waiting.size + (this.#inline?.pending ?? 0);
  }

  /** Why the worker could not start, once jobs run on the database's thread instead. */
  get fallbackReason(): string | undefined {
    return this.#fallbackReason;
  }

  /**
   * A worker takes 140-150 ms to start on the development machine (150-170 ms of CPU, mostly
   * loading its 60 modules; bench/worker-start), and a job submitted meanwhile waits: a writer
   * whose memtable filled again in that time waited for the first flush (130-220 ms in bench/db's
   * fills). The database calls this once writes begin, so the start overlaps them. Nothing after
   * close.
   */
  prestart(): void {
    if (this.#inline === null && !isStopped(this.#stop)) this.#ensureWorker();
  }

  /**
   * Runs here, now, in order, the flushes held for a worker that has not said it is ready, while
   * `until` does not hold (asked before each). A caller that must wait for a flush (a writer
   * stalled on a full memtable) would otherwise wait out the rest of the start-up, then the
   * flush; here it ends sooner, as the flush takes about as long on either thread (a first flush
   * of a 4 MiB memtable, about 100 ms on the development machine). Safe because a held job was
   * never posted. Merges stay held for the worker: one could block this thread for seconds, and
   * the worker runs a flush ahead of a merge anyway (worker.ts), the order kept here. The port is
   * read first, and before each flush: once the worker is ready, the held jobs go to it.
   */
  expedite(until?: () => boolean): void {
    for (;;) {
      this.#readPort();
      if (this.#ready || until?.() === true) return;
      const at = this.#held.findIndex((id) => this.#waiting.get(id)?.job?.kind === 'flush');
      if (at < 0) return;
      const id = this.#held.splice(at, 1)[0]!;
      const entry = this.#waiting.get(id)!;
      this.#waiting.delete(id);
      this.#unrefIfIdle();
      runHere(this.#fs, entry.job!, this.#stop, entry.done);
    }
  }

  submit(job: Job, done: JobCallback): void {
    if (this.#inline !== null) {
      this.#inline.submit(job, done);
      return;
    }
    const id = this.#nextId++;
    this.#waiting.set(id, { job, done });
    const worker = this.#ensureWorker();
    if (worker === null) return; // it could not start: the job went inline with the others
    // Keep the process alive while a job runs, so its result is installed before exit.
    worker.ref();
    this.#port!.ref();
    if (this.#ready) this.#post(id);
    else this.#held.push(id);
  }

  #ensureWorker(): Worker | null {
    if (this.#worker !== null) return this.#worker;
    const { port1, port2 } = new MessageChannel();
    let worker: Worker;
    try {
      worker = this.#startWorker(port2);
    } catch (err) {
      port1.close();
      this.#fallBack(err);
      return null;
    }
    this.#worker = worker;
    this.#port = port1;
    this.#ready = false;
    this.#held = [];
    this.#startDeadline = performance.now() + this.#startupLimitMs;
    this.#startTimer = setTimeout(() => this.#checkStarted(), this.#startupLimitMs);
    this.#startTimer.unref();
    port1.on('message', (m: WorkerMessage) => this.#receive(m));
    worker.on('error', (err) => {
      if (this.#worker === worker) this.#lost(err);
    });
    worker.on('exit', (code) => {
      if (this.#worker === worker) this.#lost(new Error(`the ${this.#name} worker exited with code ${code}`));
    });
    worker.unref();
    port1.unref();
    return worker;
  }

  /**
   * Falls back if the worker has not said it is ready by its deadline. A timer may fire a little
   * before the deadline by the clock read here: it is set again for the rest, or the check
   * would never come again (jobs held for the worker waited forever).
   */
  #checkStarted(): void {
    if (this.#worker === null || this.#ready) return;
    const left = this.#startDeadline - performance.now();
    if (left <= 0) {
      this.#fallBack(new Error(`it did not answer within ${this.#startupLimitMs} ms`));
      return;
    }
    this.#clearStartTimer();
    this.#startTimer = setTimeout(() => this.#checkStarted(), Math.ceil(left));
    this.#startTimer.unref();
  }

  #receive(m: WorkerMessage): void {
    if ('ready' in m) {
      this.#ready = true;
      this.#clearStartTimer();
      const held = this.#held;
      this.#held = [];
      for (const id of held) this.#post(id);
      return;
    }
    const entry = this.#waiting.get(m.id);
    if (entry === undefined) return;
    this.#waiting.delete(m.id);
    this.#unrefIfIdle();
    if (m.error !== undefined) entry.done(deserializeError(m.error));
    else entry.done(undefined, m.result);
  }

  /** With no job left, the worker no longer keeps the process alive (submit refs it again). */
  #unrefIfIdle(): void {
    if (this.#waiting.size > 0) return;
    this.#worker?.unref();
    this.#port?.unref();
  }

  #post(id: number): void {
    const entry = this.#waiting.get(id);
    if (entry === undefined || entry.job === null) return;
    const job = entry.job;
    // A flush's memtable copy is moved to the worker, not cloned: it is the job's own. A shared
    // arena is shared (memtable/arena-pool.ts): the worker reads it in place.
    const transfer = job.kind === 'flush' && !(job.entries instanceof MemTable) && job.entries.buffer instanceof ArrayBuffer ? [job.entries.buffer] : [];
    this.#worker!.postMessage({ id, job, stop: this.#stop } satisfies JobMessage, transfer);
    entry.job = null;
  }

  #clearStartTimer(): void {
    if (this.#startTimer !== null) clearTimeout(this.#startTimer);
    this.#startTimer = null;
  }

  /** Forgets the worker (and stops it, if it still runs). */
  #dropWorker(): void {
    const worker = this.#worker;
    this.#clearStartTimer();
    this.#worker = null;
    this.#port?.close();
    this.#port = null;
    this.#ready = false;
    this.#held = [];
    if (worker !== null) void worker.terminate().catch(() => {});
  }

  /** The worker failed or exited: before it was ready, a start failure; after, its jobs fail. */
  #lost(err: unknown): void {
    if (!this.#ready) {
      this.#fallBack(err);
      return;
    }
    this.#dropWorker();
    this.#failAll(err);
  }

  /**
   * The worker could not start: none of the waiting jobs was posted to it, so they run inline, in
   * order, and so does every later job.
   */
  #fallBack(reason: unknown): void {
    this.#dropWorker();
    const inline = new InlineRunner(this.#fs);
    this.#inline = inline;
    this.#fallbackReason = describeError(reason);
    try {
      this.#report(
        `the ${this.#name} worker thread could not start (${this.#fallbackReason}); ${this.#name} jobs run on the database's thread from now on`,
      );
    } catch {
      // A report is best effort; the jobs are not.
    }
    // None was posted: the worker never said it was ready.
    const jobs = [...this.#waiting.values()];
    this.#waiting.clear();
    for (const { job, done } of jobs) inline.submit(job!, done);
  }

  #failAll(err: unknown): void {
    const entries = [...this.#waiting.values()];
    this.#waiting.clear();
    for (const { done } of entries) done(err);
  }

  /**
   * Blocks (sleeping 1 ms at a time) until every job is done. Flushes held for a worker still
   * starting run here (`expedite`): the thread is blocked either way. A worker's failure or exit
   * cannot be seen while the thread is blocked, so a worker that has not said it is ready by its
   * start-up deadline is given up (the merges held for it run inline), and a job that gives no
   * answer for WAIT_SYNC_LIMIT_MS fails.
   */
  waitSync(until?: () => boolean): void {
    const deadline = Date.now() + WAIT_SYNC_LIMIT_MS;
    while (this.#waiting.size > 0) {
      if (until?.() === true) return;
      if (!this.#ready) {
        this.expedite(until);
        if (this.#waiting.size === 0 || until?.() === true) continue;
      }
      const m = this.#port === null ? undefined : receiveMessageOnPort(this.#port);
      if (m !== undefined) this.#receive(m.message as WorkerMessage);
      else if (this.#worker !== null && !this.#ready && performance.now() >= this.#startDeadline) this.#checkStarted();
      else if (this.#worker === null || Date.now() > deadline) this.#failAll(new Error(`the ${this.#name} worker did not answer`));
      else Atomics.wait(sleepCell, 0, 0, 1);
    }
    this.#inline?.waitSync(until);
  }

  /** Reads what has arrived: answers, and the ready message of a worker still starting. */
  poll(): void {
    if (this.#waiting.size > 0 || !this.#ready) this.#readPort();
  }

  /** Takes every message the worker has posted, without waiting. */
  #readPort(): void {
    // The port is looked up each time: a job's callback (in #receive) may close the runner.
    for (;;) {
      const port = this.#port;
      const m = port === null ? undefined : receiveMessageOnPort(port);
      if (m === undefined) return;
      this.#receive(m.message as WorkerMessage);
    }
  }

  async close(): Promise<void> {
    setStopFlag(this.#stop);
    // Jobs held for a worker still starting never reach it: abandoned here, in order.
    const held = this.#held;
    this.#held = [];
    for (const id of held) {
      const entry = this.#waiting.get(id);
      this.#waiting.delete(id);
      entry?.done(undefined, { kind: 'abandoned' });
    }
    // Jobs posted stop at their next look at the flag (or before they begin), and answer.
    while (this.#waiting.size > 0) await new Promise((r) => setImmediate(r));
    await this.#inline?.close();
    const worker = this.#worker;
    this.#clearStartTimer();
    this.#worker = null;
    this.#port?.close();
    this.#port = null;
    // Every job has answered. The worker is told to end, not waited for (a thread's teardown takes
    // milliseconds to tens of them, and it is unref'd): it ends once idle, after closing what an
    // abandoned merge left open (compaction.ts MergeOutputs), or at its shutdown limit.
    if (worker !== null) shutDown(worker, this.#name, this.#report, this.#shutdownLimitMs);
  }
}
