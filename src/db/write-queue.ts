/**
 * WriteQueue: the database's one writer queue, as LevelDB's `writers_`. Every write that cannot
 * commit at once joins it, async writes and sync twins alike; the writer at the front forms a
 * group of the writers behind it (one WAL record, one fdatasync if any member asked), applies it
 * and settles the members in order; an error reaches every member of its group.
 *
 * Two drivers run it:
 * - the async leader (`#lead`), started by the first async writer to find the queue idle; it
 *   awaits room (a flush, a level-0 stall) and the group's fdatasync without blocking the thread;
 * - a sync twin (`runUntil`), which cannot await: it finishes the group whose fdatasync is in
 *   flight with a blocking one, then runs the groups ahead of it, and its own, blocking.
 * A failed fdatasync is latched and rejects the writers it covered, even if a sync twin made
 * them durable and visible meanwhile: it is never swallowed.
 *
 * Owned by the database's thread. The queue owns its writers, the leader and the group in
 * flight; the database (`WriteHost`) owns the WAL, the memtables and the sequence numbers.
 */
import type { SieveError } from '../errors.js';
import { WriteBatch } from '../wal/write-batch.js';

/** What the queue needs of the database. */
export interface WriteHost {
  /** Throws CLOSED or the latched background error. */
  checkWritable(): void;
  /** True if a write must wait before it commits (a flush blocks the switch, level 0 is deep). */
  mustWait(): boolean;
  /** Resolves when the next write may commit. */
  waitForRoom(): Promise<void>;
  /**
   * Assigns sequence numbers and appends the WAL record (a blocking fdatasync if `sync`); if
   * `apply`, also inserts it into the memtables and makes it visible. Latches a WAL failure.
   */
  commit(batch: WriteBatch, sync: boolean, apply: boolean): void;
  /** Inserts a batch whose WAL record `commit` wrote into the memtables and makes it visible. */
  publish(batch: WriteBatch): void;
  /** fdatasync of the WAL: blocking, or on the thread pool. */
  syncLog(): void;
  syncLogAsync(): Promise<void>;
  /** Latches `err` as the background error and returns it. */
  latch(err: unknown): SieveError;
}

/** A write in the queue. `settle` is called once: undefined when visible (and durable if `sync`), or its error. */
interface Writer {
  readonly batch: WriteBatch;
  readonly sync: boolean;
  readonly settle: (err: unknown) => void;
}

/** Writers committed together: one WAL record, one fdatasync. */
interface Group {
  readonly writers: Writer[];
  readonly batch: WriteBatch;
  readonly sync: boolean;
  /** In the memtables and visible. */
  applied: boolean;
  /** Set if the group failed (every member gets it). */
  error: unknown;
}

/** A group stops growing past this many bytes (LevelDB: 1 MiB), so one writer's latency stays bounded. */
const MAX_GROUP_BYTES = 1 << 20;

/** A sync twin's write not yet settled. */
const PENDING: unique symbol = Symbol('pending');

export class WriteQueue {
  readonly #host: WriteHost;
  #writers: Writer[] = [];
  /** True while the async leader runs the queue; `#leader` is its promise (settled once it stops). */
  #leading = false;
  #leader: Promise<void> = Promise.resolve();
  /** The group whose WAL record is written and whose asynchronous fdatasync is in flight. */
  #syncing: Group | null = null;

  constructor(host: WriteHost) {
    this.#host = host;
  }

  /** True if a write may commit at once, bypassing the queue: nothing queued or in flight. */
  get idle(): boolean {
    return this.#writers.length === 0 && this.#syncing === null && !this.#leading;
  }

  /** Queues `batch`; resolves when it is visible (and durable, if `sync`). */
  enqueue(batch: WriteBatch, sync: boolean): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#writers.push({ batch, sync, settle: (err) => (err === undefined ? resolve() : reject(err)) });
      // A leader that finds nothing to await finishes before `#lead()` returns: `#leading` says
      // whether one still runs, not the promise.
      if (!this.#leading) this.#leader = this.#lead();
    });
  }

  /**
   * A sync twin: finishes the group in flight, then runs the queue (blocking) up to and
   * including `batch`; throws its error.
   */
  runUntil(batch: WriteBatch, sync: boolean): void {
    let outcome: unknown = PENDING;
    this.#writers.push({ batch, sync, settle: (err) => (outcome = err) });
    const group = this.#syncing;
    if (group !== null) {
      this.#syncing = null;
      try {
        this.#host.syncLog();
      } catch (err) {
        group.error ??= this.#host.latch(err);
      }
      // Its members are settled by the leader when its own fdatasync returns.
      if (group.error === undefined) this.#apply(group);
    }
    while (outcome === PENDING) this.#runGroup(this.#takeGroup(), true);
    if (outcome !== undefined) throw outcome;
  }

  /** Runs every queued write now, blocking (a flush needs the queue empty). */
  runAll(): void {
    if (!this.idle) this.runUntil(new WriteBatch(), false);
  }

  /** Resolves once the async leader has stopped (the queue ran empty). */
  async whenDrained(): Promise<void> {
    while (this.#leading) await this.#leader;
  }

  /** Takes the group at the front of the queue: at least one writer, at most MAX_GROUP_BYTES of batches. */
  #takeGroup(): Group {
    const queue = this.#writers;
    const writers: Writer[] = [];
    let bytes = 0;
    while (queue.length > 0 && (writers.length === 0 || bytes + queue[0]!.batch.byteLength <= MAX_GROUP_BYTES)) {
      const w = queue.shift()!;
      writers.push(w);
      bytes += w.batch.byteLength;
    }
    let batch = writers[0]!.batch;
    if (writers.length > 1) {
      batch = new WriteBatch();
      for (const w of writers) batch.append(w.batch);
    }
    return { writers, batch, sync: writers.some((w) => w.sync), applied: false, error: undefined };
  }

  /** The async driver: runs groups until the queue is empty. */
  async #lead(): Promise<void> {
    const host = this.#host;
    this.#leading = true;
    try {
      while (this.#writers.length > 0) {
        // Await only when there is something to wait for: a needless await would let writes
        // issued meanwhile join this group instead of forming the next.
        if (host.mustWait()) {
          await host.waitForRoom();
          if (this.#writers.length === 0) break; // a sync twin ran the queue meanwhile
        }
        const group = this.#takeGroup();
        if (!group.sync) {
          this.#runGroup(group, true);
          continue;
        }
        if (!this.#runGroup(group, false)) continue;
        this.#syncing = group;
        try {
          await host.syncLogAsync();
        } catch (err) {
          group.error ??= host.latch(err);
        }
        if (this.#syncing === group) this.#syncing = null;
        this.#finishGroup(group);
      }
    } finally {
      this.#leading = false;
    }
  }

  /**
   * Writes `group` to the WAL; if `blocking`, also fdatasyncs it (when asked), applies it and
   * settles its members. Returns false if it failed (its members are then settled with the error).
   */
  #runGroup(group: Group, blocking: boolean): boolean {
    try {
      this.#host.checkWritable();
      this.#host.commit(group.batch, blocking && group.sync, blocking);
      group.applied = blocking;
    } catch (err) {
      group.error = err;
      this.#finishGroup(group);
      return false;
    }
    if (blocking) this.#finishGroup(group);
    return true;
  }

  /** Settles every member of `group`, in order: with its error, or applied. */
  #finishGroup(group: Group): void {
    if (group.error === undefined) this.#apply(group);
    for (const w of group.writers) w.settle(group.error);
  }

  #apply(group: Group): void {
    if (group.applied) return;
    group.applied = true;
    this.#host.publish(group.batch);
  }
}
