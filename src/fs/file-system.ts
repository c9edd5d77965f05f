/**
 * The FileSystem seam: every byte sievekv reads or writes goes through this interface, so tests
 * can run the database on memory, simulate a crash (MemFileSystem.crashClone) or inject faults
 * (FaultyFileSystem). Implementations: NodeFileSystem (real files), MemFileSystem, FaultyFileSystem.
 *
 * The interface is synchronous on purpose: the database core is synchronous (reads are served
 * from the page cache in about a microsecond and a promise per call would cost more than the
 * read). The one slow call, `sync`, also has an asynchronous form so that group commit can keep
 * accepting writes while a batch of them is being made durable.
 *
 * Paths are plain strings joined with node:path. Errors: implementations throw SieveError
 * IO_ERROR (with the OS error as `cause`) for I/O failures and LOCKED from `lock`; a missing file
 * is IO_ERROR with `cause.code === 'ENOENT'` (see `isNotFound`).
 */

export interface FileSystem {
  /** Creates (or truncates) `path` for appending. */
  createWritable(path: string): WritableFile;
  /** Opens an existing file for appending at its end (used to reuse a log). */
  openAppendable(path: string): WritableFile;
  /** Opens an existing file for positional reads. */
  openReadable(path: string): RandomAccessFile;
  /** The whole content of a (small) file: CURRENT, a MANIFEST, a log being replayed. Owned. */
  readFile(path: string): Uint8Array;
  exists(path: string): boolean;
  /** File size in bytes. */
  size(path: string): number;
  /** Names (not paths) of the entries in `dir`, in no particular order. */
  list(dir: string): string[];
  /**
   * Creates `dir` and its missing parents. Fails at once, without retrying: IO_ERROR with the OS
   * error as cause, or with an ENOTDIR cause and "not a directory" if `dir` or an ancestor exists
   * but is not a directory.
   */
  mkdir(dir: string): void;
  /** Atomically replaces `to` with `from` (POSIX rename). Durable after `syncDir`. */
  rename(from: string, to: string): void;
  /**
   * Makes `to` a second name of the file `from` (a hard link: the same bytes, nothing copied).
   * `to` must not exist. Durable after `syncDir` of `to`'s directory. Where the file system
   * cannot (`to` on another file system, or one without hard links) it throws IO_ERROR with the
   * OS error as cause — EXDEV, EPERM, ENOTSUP, EMLINK — and the caller copies instead.
   */
  link(from: string, to: string): void;
  /** Removes a file; a missing file is not an error. */
  remove(path: string): void;
  /**
   * `remove` off the calling thread (the database removes obsolete files this way, so an unlink
   * of a large file does not hold up writes). Optional: without it the database calls `remove`.
   */
  removeAsync?(path: string): Promise<void>;
  /** Makes the directory's entries (creations, renames, removals) durable. */
  syncDir(dir: string): void;
  /**
   * Takes the exclusive lock on `path` for one open database: throws SieveError LOCKED, naming the
   * holder, if another open database holds it — in another live process, or in this one (any
   * thread, through any path that reaches the same file). A lock left by a process that no longer
   * exists is taken over; one whose holder may still be alive never is. Where it can, it also
   * refuses a file another program (LevelDB, RocksDB) holds a kernel lock on, unless
   * `options.skipForeignCheck` says it need not look.
   */
  lock(path: string, options?: LockOptions): FileLock;
}

/** How `FileSystem.lock` takes a lock. */
export interface LockOptions {
  /**
   * Asked once the lock is otherwise taken, before looking for another program's kernel lock on
   * the file (node-lock.ts): true skips that look. The database passes db/close-mark.ts's
   * `closedAsMarked`: true when no other program has opened the directory since sievekv closed it.
   * @defaultValue the look is always made
   */
  readonly skipForeignCheck?: () => boolean;
}

/** An append-only file. Legal call order: `append`* then `sync`/`syncAsync` any time, `close` once. */
export interface WritableFile {
  /**
   * Appends `data[start, end)` (default: all of it). The bytes are copied before return, and a
   * read of the file through this file system (`readFile`, `openReadable`) sees them from then
   * on, as POSIX write(2) gives: no buffering that only `sync` or `close` empties (a closing
   * database reads its open WAL back for the memtable image, db/memtable-image.ts).
   */
  append(data: Uint8Array, start?: number, end?: number): void;
  /** Makes every appended byte durable (fdatasync). */
  sync(): void;
  /** As `sync`, without blocking the thread. Appends made meanwhile may or may not be covered. */
  syncAsync(): Promise<void>;
  /** Bytes appended since creation (or the size at open, plus appends). */
  readonly size: number;
  close(): void;
}

/** A file read at arbitrary offsets. Safe to share between readers on one thread. */
export interface RandomAccessFile {
  /**
   * Reads up to `length` bytes at `position` into `buf[bufOffset, …)` and returns the count read,
   * which is less than `length` only at the end of the file. After `close`: IO_ERROR, nothing read.
   */
  readAt(buf: Uint8Array, bufOffset: number, length: number, position: number): number;
  /** The file's size when it was opened. */
  readonly size: number;
  /**
   * The file's bytes `[0, size)` mapped into memory, read-only, or undefined where this file
   * system cannot map (read with readAt then). Valid until `close`, which unmaps them: a reader
   * must drop the view first. The mapping shows the file as it is: a file another process
   * shrinks under it, or a read error of the disk, faults the reader (SIGBUS) instead of failing
   * a read, so map only files nothing truncates, as tables.
   */
  map?(): Uint8Array | undefined;
  close(): void;
}

export interface FileLock {
  /** Releases the lock; idempotent. */
  release(): void;
}

/** True if `err` reports a missing file (from any FileSystem implementation). */
/** `fs.removeAsync(path)`, or `fs.remove(path)` now for a file system without it; a failure rejects. */
export function removeOffThread(fs: FileSystem, path: string): Promise<void> {
  if (fs.removeAsync !== undefined) return fs.removeAsync(path);
  try {
    fs.remove(path);
  } catch (err) {
    return Promise.reject(err);
  }
  return Promise.resolve();
}

export function isNotFound(err: unknown): boolean {
  const cause = (err as { cause?: { code?: unknown } } | null)?.cause;
  return (err as { code?: unknown } | null)?.code === 'ENOENT' || cause?.code === 'ENOENT';
}

/** Reads exactly `length` bytes at `position` or returns the short count (see readAt). */
export function readFully(file: RandomAccessFile, position: number, length: number): Uint8Array {
  const buf = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const n = file.readAt(buf, done, length - done, position + done);
    if (n === 0) return buf.subarray(0, done);
    done += n;
  }
  return buf;
}
