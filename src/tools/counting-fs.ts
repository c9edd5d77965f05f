/**
 * CountingFileSystem: a FileSystem that passes every call to another and counts the bytes read
 * through it (`readAt` and `readFile`), calling `onRead` with the running total after each read.
 * The CLI wraps the file system of a synchronous job that has no progress callback of its own
 * (`DB.repair`) in one, to show how far it got. Nothing else changes: errors, files and bytes are
 * the inner file system's.
 */
import { removeOffThread, type FileLock, type FileSystem, type LockOptions, type RandomAccessFile, type WritableFile } from '../fs/file-system.js';

export class CountingFileSystem implements FileSystem {
  /** Bytes read so far. */
  bytesRead = 0;

  constructor(
    readonly inner: FileSystem,
    readonly onRead: (bytesRead: number) => void,
  ) {}

  #count(n: number): void {
    this.bytesRead += n;
    this.onRead(this.bytesRead);
  }

  createWritable(path: string): WritableFile {
    return this.inner.createWritable(path);
  }

  openAppendable(path: string): WritableFile {
    return this.inner.openAppendable(path);
  }

  openReadable(path: string): RandomAccessFile {
    const file = this.inner.openReadable(path);
    return {
      size: file.size,
      readAt: (buf, bufOffset, length, position) => {
        const n = file.readAt(buf, bufOffset, length, position);
        this.#count(n);
        return n;
      },
      close: () => file.close(),
    };
  }

  readFile(path: string): Uint8Array {
    const bytes = this.inner.readFile(path);
    this.#count(bytes.length);
    return bytes;
  }

  exists(path: string): boolean {
    return this.inner.exists(path);
  }

  size(path: string): number {
    return this.inner.size(path);
  }

  list(dir: string): string[] {
    return this.inner.list(dir);
  }

  mkdir(dir: string): void {
    this.inner.mkdir(dir);
  }

  rename(from: string, to: string): void {
    this.inner.rename(from, to);
  }

  link(from: string, to: string): void {
    this.inner.link(from, to);
  }

  remove(path: string): void {
    this.inner.remove(path);
  }

  removeAsync(path: string): Promise<void> {
    return removeOffThread(this.inner, path);
  }

  syncDir(dir: string): void {
    this.inner.syncDir(dir);
  }

  lock(path: string, options?: LockOptions): FileLock {
    return this.inner.lock(path, options);
  }
}
