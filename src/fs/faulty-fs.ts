/**
 * FaultyFileSystem: wraps a FileSystem and fails chosen operations, for tests of error paths
 * (disk full, EIO, a torn append). A fault names the operations it applies to, an optional path
 * pattern, and how many matching calls succeed first; it then fails the next matching call (and,
 * when `sticky`, every later one). So `{ ops: [op], after: n }` fails the n-th call (0-based) of
 * that kind, any kind, not only the first; `calls` counts every call per kind (faulty or not), so
 * a test can run a workload once to learn how many calls of each kind it makes, then aim at one.
 * An `append` fault with `partial: true` writes the first half of the data before failing, as a
 * torn write would.
 *
 * Kinds: one per FileSystem method and per method of the files it hands out (`read` is readAt,
 * `close` any file's close, `size` the file-size query). A `syncAsync` call is also a `sync` call:
 * a fault on `sync` covers both forms of fdatasync, one on `syncAsync` only the asynchronous one.
 * A failing `close` closes the file first (as close(2) frees the descriptor even when it reports
 * EIO). `exists` never fails.
 */
import { ioError, type SieveError } from '../errors.js';
import { removeOffThread, type FileLock, type FileSystem, type LockOptions, type RandomAccessFile, type WritableFile } from './file-system.js';

export type FsOperation =
  | 'create'
  | 'openAppendable'
  | 'openReadable'
  | 'readFile'
  | 'read'
  | 'append'
  | 'sync'
  | 'syncAsync'
  | 'rename'
  | 'link'
  | 'remove'
  | 'syncDir'
  | 'mkdir'
  | 'list'
  | 'lock'
  | 'size'
  | 'close';

/** Every operation kind, in a fixed order (for tests that pick one). */
export const FS_OPERATIONS: readonly FsOperation[] = [
  'create',
  'openAppendable',
  'openReadable',
  'readFile',
  'read',
  'append',
  'sync',
  'syncAsync',
  'rename',
  'remove',
  'syncDir',
  'mkdir',
  'list',
  'lock',
  'size',
  'close',
  'link',
] as const;

export interface Fault {
  /** Operations the fault counts and fails; all when omitted. */
  ops?: readonly FsOperation[];
  /** Only calls on paths matching this pattern count. */
  path?: RegExp;
  /** Matching calls that succeed before the first failure. @defaultValue 0 */
  after?: number;
  /** Keep failing every matching call after the first failure. @defaultValue false */
  sticky?: boolean;
  /** The errno reported. @defaultValue 'EIO' */
  errno?: string;
  /** For `append`: write half the bytes, then fail. @defaultValue false */
  partial?: boolean;
}

interface ArmedFault extends Fault {
  seen: number;
  fired: boolean;
}

export class FaultyFileSystem implements FileSystem {
  #faults: ArmedFault[] = [];
  /** Every failure injected so far, oldest first. */
  readonly injected: { op: FsOperation; path: string }[] = [];
  /** Calls made so far per kind, failed or not (a `syncAsync` counts as a `sync` too). */
  readonly calls: Record<FsOperation, number> = Object.fromEntries(FS_OPERATIONS.map((op) => [op, 0])) as Record<FsOperation, number>;

  constructor(readonly inner: FileSystem) {}

  /** Arms a fault; returns a function that disarms it. */
  inject(fault: Fault): () => void {
    const armed: ArmedFault = { ...fault, seen: 0, fired: false };
    this.#faults.push(armed);
    return () => {
      this.#faults = this.#faults.filter((f) => f !== armed);
    };
  }

  clearFaults(): void {
    this.#faults = [];
  }

  /** Returns the fault that fires for this call, if any (counting the call against each fault). */
  #check(op: FsOperation, path: string): ArmedFault | undefined {
    this.calls[op]++;
    if (op === 'syncAsync') this.calls.sync++;
    let firing: ArmedFault | undefined;
    for (const fault of this.#faults) {
      if (fault.ops !== undefined && !fault.ops.includes(op) && !(op === 'syncAsync' && fault.ops.includes('sync'))) continue;
      if (fault.path !== undefined && !fault.path.test(path)) continue;
      const index = fault.seen++;
      if ((fault.fired && fault.sticky) || (!fault.fired && index >= (fault.after ?? 0))) {
        fault.fired = true;
        firing ??= fault;
      }
    }
    if (firing !== undefined) this.injected.push({ op, path });
    return firing;
  }

  #error(op: FsOperation, path: string, fault: ArmedFault): SieveError {
    const errno = fault.errno ?? 'EIO';
    const cause = Object.assign(new Error(`${errno}: injected fault, ${op} '${path}'`), { code: errno });
    return ioError(`${op} failed: ${errno} (injected)`, { file: path, cause });
  }

  #guard(op: FsOperation, path: string): void {
    const fault = this.#check(op, path);
    if (fault !== undefined) throw this.#error(op, path, fault);
  }

  #wrapWritable(path: string, file: WritableFile): WritableFile {
    const fs = this;
    return {
      get size() {
        return file.size;
      },
      append(data: Uint8Array, start = 0, end = data.length): void {
        const fault = fs.#check('append', path);
        if (fault !== undefined) {
          if (fault.partial) file.append(data, start, start + ((end - start) >> 1));
          throw fs.#error('append', path, fault);
        }
        file.append(data, start, end);
      },
      sync(): void {
        fs.#guard('sync', path);
        file.sync();
      },
      syncAsync(): Promise<void> {
        const fault = fs.#check('syncAsync', path);
        return fault !== undefined ? Promise.reject(fs.#error('syncAsync', path, fault)) : file.syncAsync();
      },
      close(): void {
        fs.#closeAndCheck(path, file);
      },
    };
  }

  createWritable(path: string): WritableFile {
    this.#guard('create', path);
    return this.#wrapWritable(path, this.inner.createWritable(path));
  }

  openAppendable(path: string): WritableFile {
    this.#guard('openAppendable', path);
    return this.#wrapWritable(path, this.inner.openAppendable(path));
  }

  openReadable(path: string): RandomAccessFile {
    this.#guard('openReadable', path);
    const file = this.inner.openReadable(path);
    return {
      size: file.size,
      readAt: (buf, bufOffset, length, position) => {
        this.#guard('read', path);
        return file.readAt(buf, bufOffset, length, position);
      },
      close: () => this.#closeAndCheck(path, file),
    };
  }

  #closeAndCheck(path: string, file: { close(): void }): void {
    const fault = this.#check('close', path);
    file.close();
    if (fault !== undefined) throw this.#error('close', path, fault);
  }

  readFile(path: string): Uint8Array {
    this.#guard('readFile', path);
    return this.inner.readFile(path);
  }

  exists(path: string): boolean {
    return this.inner.exists(path);
  }

  size(path: string): number {
    this.#guard('size', path);
    return this.inner.size(path);
  }

  list(dir: string): string[] {
    this.#guard('list', dir);
    return this.inner.list(dir);
  }

  mkdir(dir: string): void {
    this.#guard('mkdir', dir);
    this.inner.mkdir(dir);
  }

  rename(from: string, to: string): void {
    this.#guard('rename', from);
    this.inner.rename(from, to);
  }

  link(from: string, to: string): void {
    this.#guard('link', to);
    this.inner.link(from, to);
  }

  remove(path: string): void {
    this.#guard('remove', path);
    this.inner.remove(path);
  }

  /** A fault on `remove` covers this form too. */
  removeAsync(path: string): Promise<void> {
    try {
      this.#guard('remove', path);
    } catch (err) {
      return Promise.reject(err);
    }
    return removeOffThread(this.inner, path);
  }

  syncDir(dir: string): void {
    this.#guard('syncDir', dir);
    this.inner.syncDir(dir);
  }

  lock(path: string, options?: LockOptions): FileLock {
    this.#guard('lock', path);
    return this.inner.lock(path, options);
  }
}
