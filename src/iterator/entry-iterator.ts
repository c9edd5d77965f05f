/**
 * EntryIterator: what `db.iterator(options)` returns. Yields `[key, value]` pairs as owned
 * Buffers (the caller may keep them) in key order (descending with `reverse`), at most `limit`
 * of them, within the bounds, as of one snapshot:
 *
 *   for await (const [k, v] of db.iterator({ gte: 'a', lt: 'b' })) { … }
 *   for (const [k, v] of db.iterator({ reverse: true, limit: 10 })) { … }   // synchronous
 *
 * Lifetime: the iterator pins what it reads (memtables, a version: files are not deleted under
 * it) until it is closed — the `release` callback runs, exactly once — by `close()`, an error, or
 * the end of a `for await` / `for…of` loop over it (a loop that runs out, breaks or throws closes
 * it, as Level's iterators do). Stepped by hand (`next()`, `nextSync()`), an iterator that reached
 * its end or its limit stays open: `next()` reports done, and `seek()` may place it again (Level's
 * "ended, not closed"); close it when done. Closing the database ends every iterator still open
 * (`end()`): after that every call but `close()` is CLOSED, since the files it read are closed
 * and another process may be writing.
 *
 * `seek(target)` repositions: the next entry is the first ≥ target (≤ target with `reverse`),
 * still within the bounds; the limit counts every entry yielded since the iterator was made, so
 * an iterator at its limit stays done after a seek (as in Level).
 *
 * The work is synchronous (the data is in memory or read with synchronous file reads); `next()`
 * returns an already settled promise, so `for await` costs one microtask per entry.
 */
import { Buffer } from 'node:buffer';
import { ErrorCode, SieveError } from '../errors.js';
import { toBytes } from '../key-encoding.js';
import { DBIterator } from './db-iterator.js';
import type { InternalIterator } from './internal-iterator.js';
import type { ResolvedIteratorOptions } from './iterator-options.js';

export type Entry = [key: Buffer, value: Buffer];

type Result = IteratorResult<Entry, undefined>;
const DONE: Result = Object.freeze({ done: true, value: undefined }) as Result;
/** The value of every entry of a keys-only iterator: empty, so sharing it is safe. */
const NO_VALUE = Buffer.alloc(0);
/**
 * The page of an iterator that made none yet: shared, as it holds nothing. (A zero-length typed
 * array is no cheap object: V8 makes it off-heap, ~190 ns, an eighth of opening and closing an
 * iterator on a settled database.)
 */
const NO_PAGE = Buffer.alloc(0);

// Where the core stands relative to what was yielded:
/** Not positioned yet: the first `next` seeks to the first (or last) entry. */
const UNSTARTED = 0;
/** At the entry just yielded: the next `next` moves first. */
const YIELDED = 1;
/** At an entry placed by `seek` and not yet yielded. */
const SOUGHT = 2;
/** Past the end: nothing more until a `seek`. */
const ENDED = 3;

/** A Buffer over `bytes`' memory, no copy (`copy: false`). */
function view(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export class EntryIterator implements AsyncIterableIterator<Entry> {
  #core: DBIterator | null;
  #release: (() => void) | null;
  readonly #reverse: boolean;
  readonly #limit: number;
  readonly #values: boolean;
  readonly #copy: boolean;
  #count = 0;
  #state: number = UNSTARTED;
  /** Set when the database ended the iterator: calls are CLOSED rather than done. */
  #ended = false;
  /** The bytes of the last `nextv` page with `copy: false` (see #nextPage). */
  #page: Buffer = NO_PAGE;

  /**
   * @param core the positioned-or-not core view, taken over (closed with this iterator).
   * @param options validated options (bounds are already in `core`; reverse, limit, values and copy are used).
   * @param release called exactly once, after `core` is closed, to unpin what the DB pinned.
   */
  constructor(core: DBIterator, options: Pick<ResolvedIteratorOptions, 'reverse' | 'limit' | 'values' | 'copy'>, release: () => void) {
    this.#core = core;
    this.#release = release;
    this.#reverse = options.reverse;
    this.#limit = options.limit;
    this.#values = options.values;
    this.#copy = options.copy;
  }

  /** True once closed (`close()`, `return()`, an error, the end of a loop over it, or the database's close). */
  get closed(): boolean {
    return this.#core === null;
  }

  /**
   * The next entry (owned copies; the value empty with `values: false`), or undefined at the end
   * or the limit (the iterator stays open: see `seek`) and once closed. CLOSED after the
   * database's close.
   */
  nextSync(): Entry | undefined {
    const core = this.#core;
    if (core === null) {
      if (this.#ended) throw new SieveError(ErrorCode.CLOSED, 'the database was closed');
      return undefined;
    }
    if (this.#count >= this.#limit || this.#state === ENDED) return undefined;
    try {
      if (this.#state === UNSTARTED) {
        if (this.#reverse) core.seekToLast();
        else core.seekToFirst();
      } else if (this.#state === YIELDED) {
        if (this.#reverse) core.prev();
        else core.next();
      }
      if (!core.valid()) {
        this.#state = ENDED;
        return undefined;
      }
      this.#state = YIELDED;
      this.#count++;
      if (!this.#copy) return [view(core.key()), this.#values ? view(core.value()) : NO_VALUE];
      return [core.keyBuffer(), this.#values ? core.valueBuffer() : NO_VALUE];
    } catch (err) {
      this.#closeAfterError();
      throw err;
    }
  }

  /**
   * Up to `size` next entries (fewer only at the end or the limit; empty there, and once closed):
   * Level's `nextv`, in one call. The iterator stays open as with `nextSync`. INVALID_ARGUMENT
   * unless `size` is an integer ≥ 1.
   */
  nextvSync(size: number): Entry[] {
    if (!Number.isInteger(size) || size < 1) throw new SieveError(ErrorCode.INVALID_ARGUMENT, `nextv size must be an integer >= 1, got ${String(size)}`);
    const out: Entry[] = [];
    if (!this.#copy) return this.#nextPage(size, out);
    while (out.length < size) {
      const entry = this.nextSync();
      if (entry === undefined) break;
      out.push(entry);
    }
    return out;
  }

  /**
   * `nextvSync` with `copy: false`: the views `nextSync` yields last only until the next step
   * (key and saved value buffers are reused), so each entry's bytes are copied into the page
   * buffer, reused from call to call, and the entries view that: valid until the next call.
   */
  #nextPage(size: number, out: Entry[]): Entry[] {
    const spans: number[] = [];
    let used = 0;
    while (spans.length < 4 * size) {
      const entry = this.nextSync();
      if (entry === undefined) break;
      const [key, value] = entry;
      const need = used + key.length + value.length;
      if (need > this.#page.length) {
        const grown = Buffer.allocUnsafe(Math.max(need, 2 * this.#page.length));
        this.#page.copy(grown, 0, 0, used);
        this.#page = grown;
      }
      const page = this.#page;
      page.set(key, used);
      page.set(value, used + key.length);
      spans.push(used, used + key.length, used + key.length, need);
      used = need;
    }
    const page = this.#page;
    for (let i = 0; i < spans.length; i += 4) {
      out.push([page.subarray(spans[i]!, spans[i + 1]!), this.#values ? page.subarray(spans[i + 2]!, spans[i + 3]!) : NO_VALUE]);
    }
    return out;
  }

  /** As `nextvSync`, as an already settled promise (rejected on error). */
  nextv(size: number): Promise<Entry[]> {
    try {
      return Promise.resolve(this.nextvSync(size));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** As `nextSync`, as an already settled promise (rejected on error). */
  next(): Promise<Result> {
    try {
      const entry = this.nextSync();
      return Promise.resolve(entry === undefined ? DONE : { done: false, value: entry });
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Called by `for await` on an early exit: closes. */
  return(): Promise<Result> {
    try {
      this.close();
      return Promise.resolve(DONE);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * Repositions at the first entry ≥ `target` (≤ with `reverse`) within the bounds; the next
   * `next()` yields it. Works as well after the iterator reached its end (it goes on from the new
   * position) or its limit (it stays done: the limit counts every entry yielded). `target`: bytes
   * or a string (UTF-8). CLOSED after close; INVALID_ARGUMENT for another type.
   */
  seek(target: Uint8Array | string): void {
    const core = this.#core;
    if (core === null) throw new SieveError(ErrorCode.CLOSED, this.#ended ? 'the database was closed' : 'iterator is closed');
    const key = toBytes(target, 'seek target');
    try {
      if (this.#reverse) core.seekForPrev(key);
      else core.seek(key);
      this.#state = SOUGHT;
    } catch (err) {
      this.#closeAfterError();
      throw err;
    }
  }

  /**
   * Closes the view and releases its pins (synchronous; returns nothing to await, though awaiting
   * it is harmless). Idempotent. If closing the internal iterators throws, the pins are still
   * released and the error is rethrown.
   */
  close(): void {
    const core = this.#core;
    if (core === null) return;
    this.#core = null;
    // A closed iterator may stay on the database's list of open ones until a sweep (OpenIterators):
    // it keeps no page of entries meanwhile (views of it were valid only until this call).
    this.#page = NO_PAGE;
    const release = this.#release!;
    this.#release = null;
    try {
      core.close();
    } finally {
      release();
    }
  }

  /** @internal Called by the database as it closes: closes, and every later call is CLOSED. */
  end(): void {
    this.#ended = this.#core !== null;
    this.#closeAfterError();
  }

  /**
   * The view a `for await` loop steps (shares position, limit and lifetime): it closes the iterator
   * when the loop runs out, as on a break or an error.
   */
  [Symbol.asyncIterator](): AsyncIterableIterator<Entry> {
    const self = this;
    return {
      next(): Promise<Result> {
        try {
          const entry = self.nextSync();
          if (entry === undefined) self.close();
          return Promise.resolve(entry === undefined ? DONE : { done: false, value: entry });
        } catch (err) {
          return Promise.reject(err);
        }
      },
      return(): Promise<Result> {
        return self.return();
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  /** A synchronous view of the same iterator (shares position, limit and lifetime); closes it when a loop runs out. */
  [Symbol.iterator](): IterableIterator<Entry> {
    const self = this;
    return {
      next(): IteratorResult<Entry, undefined> {
        const entry = self.nextSync();
        if (entry === undefined) self.close();
        return entry === undefined ? DONE : { done: false, value: entry };
      },
      return(): IteratorResult<Entry, undefined> {
        self.close();
        return DONE;
      },
      [Symbol.iterator]() {
        return this;
      },
    };
  }

  /** `await using it = db.iterator()` closes it at the end of the block. */
  [Symbol.asyncDispose](): Promise<void> {
    try {
      this.close();
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** `using it = db.iterator()` closes it at the end of the block. */
  [Symbol.dispose](): void {
    this.close();
  }

  /** After an error: release the pins, keeping the original error (not one from closing). */
  #closeAfterError(): void {
    try {
      this.close();
    } catch {
      // the error being thrown matters more than a failure to close after it
    }
  }
}

/**
 * Builds the user's iterator over a merged internal iterator: the database calls this after
 * `resolveIteratorOptions(userOptions)` succeeded and it pinned the sources.
 *
 * @param internal the merged view of the pinned memtables and tables (taken over).
 * @param sequence the snapshot's sequence number: entries above it are invisible.
 * @param options the resolved options (bounds, reverse, limit).
 * @param release unpins the version and memtables; called exactly once, also if this throws.
 * @param releaseInternal if given, takes `internal` when the iterator closes instead of closing it
 *   (DBIterator's `releaseIter`), before `release` runs.
 */
export function createEntryIterator(
  internal: InternalIterator,
  sequence: number,
  options: ResolvedIteratorOptions,
  release: () => void,
  releaseInternal?: (internal: InternalIterator, healthy: boolean) => void,
): EntryIterator {
  let core: DBIterator;
  try {
    core = new DBIterator(internal, sequence, options, !options.values, releaseInternal);
  } catch (err) {
    try {
      internal.close();
    } finally {
      release();
    }
    throw err;
  }
  return new EntryIterator(core, options, release);
}
