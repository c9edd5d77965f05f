/**
 * MemFileSystem: the FileSystem seam in memory, for tests. It models what survives a power cut:
 *
 * - a file's bytes survive only up to its last `sync` (appends after it are lost);
 * - a directory entry (a created, renamed or removed name) survives only once `syncDir` ran on
 *   its directory after the change (POSIX: fsync the file for its data, the directory for its
 *   name). Directories themselves (`mkdir`) are taken as durable at once.
 *
 * `crashClone()` returns a new file system holding exactly what survives, as a reopen after
 * SIGKILL-plus-power-loss would find it. With `{ strictNames: false }`, names are durable at once
 * (a kinder file system, like ext4's default ordering for renames) and only unsynced bytes are lost.
 */
import { dirname } from 'node:path';
import { ErrorCode, ioError, SieveError } from '../errors.js';
import type { FileLock, FileSystem, RandomAccessFile, WritableFile } from './file-system.js';

interface Inode {
  data: Uint8Array;
  length: number;
  synced: number;
}

function notFound(op: string, path: string): SieveError {
  const cause = Object.assign(new Error(`ENOENT: no such file, ${op} '${path}'`), { code: 'ENOENT' });
  return ioError(`${op} failed: ENOENT`, { file: path, cause });
}

function appendTo(inode: Inode, data: Uint8Array, start: number, end: number): void {
  const need = inode.length + (end - start);
  if (need > inode.data.length) {
    const grown = new Uint8Array(Math.max(need, inode.data.length * 2, 256));
    grown.set(inode.data.subarray(0, inode.length));
    inode.data = grown;
  }
  inode.data.set(data.subarray(start, end), inode.length);
  inode.length = need;
}

export interface MemFileSystemOptions {
  /** Names need `syncDir` to survive a crash. @defaultValue true */
  strictNames?: boolean;
}

export class MemFileSystem implements FileSystem {
  readonly #live = new Map<string, Inode>();
  readonly #durable = new Map<string, Inode>();
  readonly #dirs = new Set<string>(['/', '.']);
  readonly #locks = new Set<string>();
  readonly #strictNames: boolean;

  constructor(options: MemFileSystemOptions = {}) {
    this.#strictNames = options.strictNames ?? true;
  }

  #nameChanged(path: string, inode: Inode | undefined): void {
    if (this.#strictNames) return;
    if (inode === undefined) this.#durable.delete(path);
    else this.#durable.set(path, inode);
  }

  #inode(op: string, path: string): Inode {
    const inode = this.#live.get(path);
    if (inode === undefined) throw notFound(op, path);
    return inode;
  }

  #checkParent(op: string, path: string): void {
    if (!this.#dirs.has(dirname(path))) throw notFound(op, path);
  }

  #writable(path: string, inode: Inode): WritableFile {
    let closed = false;
    const check = (): void => {
      if (closed) throw ioError('write to a closed file', { file: path });
    };
    return {
      get size() {
        return inode.length;
      },
      append(data: Uint8Array, start = 0, end = data.length): void {
        check();
        appendTo(inode, data, start, end);
      },
      sync(): void {
        check();
        inode.synced = inode.length;
      },
      syncAsync(): Promise<void> {
        check();
        inode.synced = inode.length;
        return Promise.resolve();
      },
      close(): void {
        closed = true;
      },
    };
  }

  createWritable(path: string): WritableFile {
    this.#checkParent('create', path);
    const inode: Inode = { data: new Uint8Array(0), length: 0, synced: 0 };
    this.#live.set(path, inode);
    this.#nameChanged(path, inode);
    return this.#writable(path, inode);
  }

  openAppendable(path: string): WritableFile {
    return this.#writable(path, this.#inode('open', path));
  }

  openReadable(path: string): RandomAccessFile {
    const inode = this.#inode('open', path);
    const size = inode.length;
    return {
      size,
      readAt(buf: Uint8Array, bufOffset: number, length: number, position: number): number {
        const end = Math.min(inode.length, position + length);
        if (position >= end) return 0;
        buf.set(inode.data.subarray(position, end), bufOffset);
        return end - position;
      },
      close(): void {},
    };
  }

  readFile(path: string): Uint8Array {
    const inode = this.#inode('read', path);
    return inode.data.slice(0, inode.length);
  }

  exists(path: string): boolean {
    return this.#live.has(path) || this.#dirs.has(path);
  }

  size(path: string): number {
    return this.#inode('stat', path).length;
  }

  list(dir: string): string[] {
    if (!this.#dirs.has(dir)) throw notFound('list', dir);
    const names: string[] = [];
    const prefix = dir.endsWith('/') ? dir : `${dir}/`;
    for (const path of [...this.#live.keys(), ...this.#dirs]) {
      if (path.startsWith(prefix) && path.length > prefix.length && !path.slice(prefix.length).includes('/')) {
        names.push(path.slice(prefix.length));
      }
    }
    return names;
  }

  mkdir(dir: string): void {
    for (let d = dir; !this.#dirs.has(d); d = dirname(d)) this.#dirs.add(d);
  }

  rename(from: string, to: string): void {
    const inode = this.#inode('rename', from);
    this.#checkParent('rename', to);
    this.#live.delete(from);
    this.#live.set(to, inode);
    this.#nameChanged(from, undefined);
    this.#nameChanged(to, inode);
  }

  remove(path: string): void {
    this.#live.delete(path);
    this.#nameChanged(path, undefined);
  }

  syncDir(dir: string): void {
    if (!this.#dirs.has(dir)) throw notFound('sync directory', dir);
    for (const path of [...this.#durable.keys()]) {
      if (dirname(path) === dir && !this.#live.has(path)) this.#durable.delete(path);
    }
    for (const [path, inode] of this.#live) {
      if (dirname(path) === dir) this.#durable.set(path, inode);
    }
  }

  lock(path: string): FileLock {
    if (this.#locks.has(path)) {
      throw new SieveError(ErrorCode.LOCKED, 'the database is already open', { file: path });
    }
    this.#locks.add(path);
    if (!this.#live.has(path)) this.createWritable(path).close();
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.#locks.delete(path);
      },
    };
  }

  /**
   * What a crash leaves: every durable name, each file cut back to its synced bytes. Locks do
   * not survive (the crashed process is gone). This file system is left untouched.
   */
  crashClone(): MemFileSystem {
    const clone = new MemFileSystem({ strictNames: this.#strictNames });
    for (const dir of this.#dirs) clone.#dirs.add(dir);
    const copies = new Map<Inode, Inode>();
    for (const [path, inode] of this.#durable) {
      let copy = copies.get(inode);
      if (copy === undefined) {
        copy = { data: inode.data.slice(0, inode.synced), length: inode.synced, synced: inode.synced };
        copies.set(inode, copy);
      }
      clone.#live.set(path, copy);
      clone.#durable.set(path, copy);
    }
    return clone;
  }
}
