/**
 * MemFileSystem: the FileSystem seam in memory, for tests. It models what survives a power cut:
 *
 * - a file's bytes survive only up to its last `sync` (appends after it are lost);
 * - a directory entry (a created, renamed or removed name) survives only once `syncDir` ran on
 *   its directory after the change (POSIX: fsync the file for its data, the directory for its
 *   name). Directories themselves (`mkdir`) are taken as durable at once.
 *
 * `crashClone()` returns a new file system holding exactly what is sure to survive, as a reopen
 * after SIGKILL-plus-power-loss would find it at worst-but-one. `crashClone({ rng })` is harsher,
 * the way ext4 and a power cut are: what was never made durable may or may not be there, decided
 * per file and per name by `rng` (seeded, so a crash image is replayable):
 *
 * - each file keeps its synced bytes and any prefix of its unsynced ones (none, some, all): a torn
 *   append; with `zeroFill`, sometimes followed by zeros up to at most the file's length (space
 *   the file system allocated but never wrote, in whole 512-byte sectors: the zeros start at a
 *   sector boundary or where the synced bytes end). Bytes are never invented or reordered within
 *   a file;
 * - files decide independently, so a later file's unsynced bytes may survive where an earlier
 *   file's did not (writeback reorders across files);
 * - each name changed since its directory's last `syncDir` (created, renamed, removed) survives
 *   or not, independently: a rename may leave the old name, the new one, both or (for a name
 *   that did not exist before) neither — harsher than a journaled rename, which is one of the two.
 *
 * With `{ strictNames: false }`, names are durable at once (a kinder file system, like ext4's
 * default ordering for renames) and only unsynced bytes are lost.
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

export interface CrashCloneOptions {
  /**
   * Decides what of the unsynced state survives (a number in [0, 1) per call, as Math.random).
   * Without it only synced bytes and directory-synced names survive, deterministically.
   */
  rng?: () => number;
  /** With `rng`: the chance that a file's kept bytes are followed by zeros. @defaultValue 0 */
  zeroFill?: number;
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
    let closed = false;
    return {
      size,
      readAt(buf: Uint8Array, bufOffset: number, length: number, position: number): number {
        if (closed) throw ioError('read failed: EBADF (a closed file)', { file: path });
        const end = Math.min(inode.length, position + length);
        if (position >= end) return 0;
        buf.set(inode.data.subarray(position, end), bufOffset);
        return end - position;
      },
      close(): void {
        closed = true;
      },
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
    const missing: string[] = [];
    for (let d = dir; !this.#dirs.has(d); d = dirname(d)) {
      if (this.#live.has(d)) {
        const cause = Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${dir}'`), { code: 'ENOTDIR' });
        throw ioError(`mkdir failed: ${d} is not a directory`, { file: dir, cause });
      }
      missing.push(d);
    }
    for (const d of missing) this.#dirs.add(d);
  }

  rename(from: string, to: string): void {
    const inode = this.#inode('rename', from);
    this.#checkParent('rename', to);
    this.#live.delete(from);
    this.#live.set(to, inode);
    this.#nameChanged(from, undefined);
    this.#nameChanged(to, inode);
  }

  /** A second name for the same inode: appends through either name show through both. */
  link(from: string, to: string): void {
    const inode = this.#inode('link', from);
    this.#checkParent('link', to);
    if (this.#live.has(to) || this.#dirs.has(to)) {
      const cause = Object.assign(new Error(`EEXIST: file already exists, link '${from}' -> '${to}'`), { code: 'EEXIST' });
      throw ioError('link failed: EEXIST', { file: to, cause });
    }
    this.#live.set(to, inode);
    this.#nameChanged(to, inode);
  }

  remove(path: string): void {
    this.#live.delete(path);
    this.#nameChanged(path, undefined);
  }

  removeAsync(path: string): Promise<void> {
    this.remove(path);
    return Promise.resolve();
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
   * What a crash leaves (see the file header): without `rng`, every durable name and each file cut
   * back to its synced bytes; with it, also some of what was never made durable. Locks do not
   * survive (the crashed process is gone). This file system is left untouched.
   */
  crashClone(options: CrashCloneOptions = {}): MemFileSystem {
    const { rng, zeroFill = 0 } = options;
    const clone = new MemFileSystem({ strictNames: this.#strictNames });
    for (const dir of this.#dirs) clone.#dirs.add(dir);
    const copies = new Map<Inode, Inode>();
    for (const [path, inode] of this.#survivingNames(rng)) {
      let copy = copies.get(inode);
      if (copy === undefined) {
        copy = rng === undefined ? syncedCopy(inode, inode.synced, inode.synced) : tornCopy(inode, rng, zeroFill);
        copies.set(inode, copy);
      }
      clone.#live.set(path, copy);
      clone.#durable.set(path, copy);
    }
    return clone;
  }

  /** The names a crash keeps: the durable ones, and with `rng` each unsynced change or not. */
  #survivingNames(rng: (() => number) | undefined): Map<string, Inode> {
    if (rng === undefined) return this.#durable;
    const names = new Map(this.#durable);
    for (const path of new Set([...this.#durable.keys(), ...this.#live.keys()])) {
      const live = this.#live.get(path);
      if (live === this.#durable.get(path) || rng() < 0.5) continue;
      if (live === undefined) names.delete(path);
      else names.set(path, live);
    }
    return names;
  }
}

/** A durable copy of `inode`'s first `kept` bytes, followed by zeros up to `length`. */
function syncedCopy(inode: Inode, kept: number, length: number): Inode {
  const data = new Uint8Array(length);
  data.set(inode.data.subarray(0, kept));
  return { data, length, synced: length };
}

/** The unit a file system writes (and leaves unwritten) space in. */
const SECTOR = 512;

/** A file after a crash: its synced bytes, then a prefix of its unsynced ones, maybe zeros after. */
function tornCopy(inode: Inode, rng: () => number, zeroFill: number): Inode {
  const unsynced = inode.length - inode.synced;
  if (unsynced === 0) return syncedCopy(inode, inode.synced, inode.synced);
  const r = rng();
  // A third each: none, all, a random cut (so both ends, the commonest outcomes, come up often).
  const kept = r < 1 / 3 ? 0 : r < 2 / 3 ? unsynced : Math.floor(rng() * (unsynced + 1));
  const zeros = kept < unsynced && rng() < zeroFill ? 1 + Math.floor(rng() * (unsynced - kept)) : 0;
  if (zeros === 0) return syncedCopy(inode, inode.synced + kept, inode.synced + kept);
  // Unwritten space is whole sectors: the zeros start at a sector boundary (the bytes before it in
  // that sector lost too), or where the synced bytes end.
  const end = inode.synced + kept + zeros;
  const zerosFrom = Math.max(inode.synced, Math.floor((inode.synced + kept) / SECTOR) * SECTOR);
  return syncedCopy(inode, zerosFrom, end);
}
