/**
 * NodeFileSystem: the FileSystem seam over node:fs, synchronous calls throughout (see
 * file-system.ts for why). Every OS error becomes SieveError IO_ERROR with the OS error as cause.
 * The directory lock lives in node-lock.ts (a pid file that every thread and process sees).
 *
 * `mkdir` creates one level at a time, never with `recursive: true`: Node's recursive mkdir loops
 * forever where mkdir fails with ENOENT under a parent that exists (`/proc/1/x`), and reports a
 * path that is a file as EEXIST instead of "not a directory".
 */
import { Buffer, constants } from 'node:buffer';
import * as fs from 'node:fs';
import { dirname } from 'node:path';
import { ioError, SieveError } from '../errors.js';
import { nativeAddon } from '../native.js';
import type { FileLock, FileSystem, LockOptions, RandomAccessFile, WritableFile } from './file-system.js';
import { lockDirectory } from './node-lock.js';

/** The longest Buffer: a larger file is read, not mapped. */
const MAX_LENGTH = constants.MAX_LENGTH;
/**
 * Files mapped at once by this thread, at most (LevelDB's kDefaultMmapLimit on 64-bit systems):
 * past it files are read, so that many databases' tables cannot run the process into the
 * kernel's limit on mappings (vm.max_map_count), where V8's own allocations would fail.
 */
const MAX_MAPPED_FILES = 1000;
let mappedFiles = 0;

function wrap(op: string, path: string, err: unknown): SieveError {
  const code = (err as NodeJS.ErrnoException).code ?? 'unknown';
  return ioError(`${op} failed: ${code}`, { file: path, cause: err });
}

class NodeWritableFile implements WritableFile {
  #fd: number;
  #size: number;
  #closed = false;

  constructor(
    readonly path: string,
    fd: number,
    size: number,
  ) {
    this.#fd = fd;
    this.#size = size;
  }

  get size(): number {
    return this.#size;
  }

  append(data: Uint8Array, start = 0, end = data.length): void {
    let offset = start;
    try {
      while (offset < end) offset += fs.writeSync(this.#fd, data, offset, end - offset);
    } catch (err) {
      throw wrap('append', this.path, err);
    } finally {
      this.#size += offset - start;
    }
  }

  sync(): void {
    try {
      fs.fdatasyncSync(this.#fd);
    } catch (err) {
      throw wrap('sync', this.path, err);
    }
  }

  syncAsync(): Promise<void> {
    return new Promise((resolvePromise, reject) => {
      fs.fdatasync(this.#fd, (err) => (err ? reject(wrap('sync', this.path, err)) : resolvePromise()));
    });
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      fs.closeSync(this.#fd);
    } catch (err) {
      throw wrap('close', this.path, err);
    }
  }
}

class NodeRandomAccessFile implements RandomAccessFile {
  #fd: number;
  #closed = false;
  /** The mapping `map` made, unmapped at close. */
  #mapped: ArrayBuffer | null = null;

  constructor(
    readonly path: string,
    fd: number,
    readonly size: number,
  ) {
    this.#fd = fd;
  }

  /**
   * With the addon, one `pread` loop in C (native/pread.c); else node:fs's readSync. After close,
   * EBADF without a read: the descriptor's number may name another file by then.
   */
  readAt(buf: Uint8Array, bufOffset: number, length: number, position: number): number {
    if (this.#closed) throw wrap('read', this.path, Object.assign(new Error('a closed file'), { code: 'EBADF' }));
    try {
      if (nativeAddon !== null) return nativeAddon.pread(this.#fd, buf, bufOffset, length, position);
      return fs.readSync(this.#fd, buf, bufOffset, length, position);
    } catch (err) {
      throw wrap('read', this.path, err);
    }
  }

  /**
   * Maps the file (native/mmap.c), or undefined without the addon, for an empty file, a closed one,
   * past MAX_MAPPED_FILES, or where the system refuses (address space, limits): reads then go
   * through readAt.
   */
  map(): Uint8Array | undefined {
    if (nativeAddon === null || this.#closed || this.size === 0 || this.size > MAX_LENGTH) return undefined;
    if (this.#mapped === null) {
      if (mappedFiles >= MAX_MAPPED_FILES) return undefined;
      try {
        this.#mapped = nativeAddon.map(this.#fd, this.size);
      } catch {
        return undefined;
      }
      mappedFiles++;
    }
    return Buffer.from(this.#mapped);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      if (this.#mapped !== null) {
        const mapped = this.#mapped;
        this.#mapped = null;
        mappedFiles--;
        nativeAddon!.unmap(mapped);
      }
    } finally {
      try {
        fs.closeSync(this.#fd);
      } catch (err) {
        throw wrap('close', this.path, err);
      }
    }
  }
}

/** IO_ERROR for a path component that exists but is not a directory, with an ENOTDIR cause. */
function notADirectory(dir: string, component: string): SieveError {
  const cause = Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${dir}'`), {
    code: 'ENOTDIR',
    syscall: 'mkdir',
    path: component,
  });
  return ioError(`mkdir failed: ${component} is not a directory`, { file: dir, cause });
}

/** What is at `path`: a directory, something else, or nothing (also: a component above is a file). */
function kindOf(op: string, path: string): 'directory' | 'other' | 'missing' {
  try {
    const stat = fs.statSync(path, { throwIfNoEntry: false });
    if (stat === undefined) return 'missing';
    return stat.isDirectory() ? 'directory' : 'other';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') return 'missing';
    throw wrap(op, path, err);
  }
}

export class NodeFileSystem implements FileSystem {
  createWritable(path: string): WritableFile {
    try {
      return new NodeWritableFile(path, fs.openSync(path, 'w'), 0);
    } catch (err) {
      throw wrap('create', path, err);
    }
  }

  openAppendable(path: string): WritableFile {
    try {
      const fd = fs.openSync(path, 'a');
      return new NodeWritableFile(path, fd, fs.fstatSync(fd).size);
    } catch (err) {
      throw wrap('open', path, err);
    }
  }

  openReadable(path: string): RandomAccessFile {
    try {
      const fd = fs.openSync(path, 'r');
      return new NodeRandomAccessFile(path, fd, fs.fstatSync(fd).size);
    } catch (err) {
      throw wrap('open', path, err);
    }
  }

  readFile(path: string): Uint8Array {
    try {
      return fs.readFileSync(path);
    } catch (err) {
      throw wrap('read', path, err);
    }
  }

  exists(path: string): boolean {
    return fs.existsSync(path);
  }

  size(path: string): number {
    try {
      return fs.statSync(path).size;
    } catch (err) {
      throw wrap('stat', path, err);
    }
  }

  list(dir: string): string[] {
    try {
      return fs.readdirSync(dir);
    } catch (err) {
      throw wrap('list', dir, err);
    }
  }

  mkdir(dir: string): void {
    // Walk up to the first ancestor that exists (it must be a directory), then create each
    // missing level below it, outermost first. Each step fails at once instead of retrying.
    const missing: string[] = [];
    for (let d = dir; ; d = dirname(d)) {
      const kind = kindOf('mkdir', d);
      if (kind === 'directory') break;
      if (kind === 'other') throw notADirectory(dir, d);
      missing.push(d);
      if (dirname(d) === d) break;
    }
    for (const d of missing.reverse()) {
      try {
        fs.mkdirSync(d);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw wrap('mkdir', d, err);
        const kind = kindOf('mkdir', d);
        if (kind === 'other') throw notADirectory(dir, d);
        if (kind === 'missing') throw wrap('mkdir', d, err); // a dangling symbolic link
        // A directory: made meanwhile by someone else, which is as good.
      }
    }
  }

  rename(from: string, to: string): void {
    try {
      fs.renameSync(from, to);
    } catch (err) {
      throw wrap('rename', from, err);
    }
  }

  link(from: string, to: string): void {
    try {
      fs.linkSync(from, to);
    } catch (err) {
      throw wrap('link', from, err);
    }
  }

  remove(path: string): void {
    try {
      fs.rmSync(path, { force: true });
    } catch (err) {
      throw wrap('remove', path, err);
    }
  }

  /**
   * One unlink(2) on libuv's pool: the file is gone once that request has run, even on a thread
   * that never yields to the event loop (`fs.rm` would wait there for its lstat's callback first).
   */
  removeAsync(path: string): Promise<void> {
    return new Promise((resolve, reject) => {
      fs.unlink(path, (err) => (err && err.code !== 'ENOENT' ? reject(wrap('remove', path, err)) : resolve()));
    });
  }

  syncDir(dir: string): void {
    let fd: number | undefined;
    try {
      fd = fs.openSync(dir, 'r');
      fs.fsyncSync(fd);
    } catch (err) {
      throw wrap('sync directory', dir, err);
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  }

  lock(path: string, options?: LockOptions): FileLock {
    return lockDirectory(path, options);
  }
}
