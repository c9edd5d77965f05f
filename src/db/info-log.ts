/**
 * The info log (`LOG`, the previous one kept as `LOG.old`), as LevelDB keeps one: a human-readable
 * line per notable event — recovery, skipped damage, flushes, compactions, background errors.
 * Best effort: a failure to write it never fails the database.
 */
import { TextEncoder } from 'node:util';
import type { FileSystem, WritableFile } from '../fs/file-system.js';
import { infoLogFileName, oldInfoLogFileName } from '../version/filenames.js';

const encoder = new TextEncoder();

export class InfoLog {
  #file: WritableFile | null = null;
  #failed = false;

  /** Nothing is written until the first line: an open refused before recovery leaves no trace. */
  constructor(
    private readonly fs: FileSystem,
    private readonly dir: string,
  ) {}

  #open(): WritableFile | null {
    if (this.#file !== null || this.#failed) return this.#file;
    try {
      const path = infoLogFileName(this.dir);
      if (this.fs.exists(path)) this.fs.rename(path, oldInfoLogFileName(this.dir));
      this.#file = this.fs.createWritable(path);
    } catch {
      this.#failed = true;
    }
    return this.#file;
  }

  log(message: string): void {
    const file = this.#open();
    if (file === null) return;
    try {
      file.append(encoder.encode(`${new Date().toISOString()} ${message}\n`));
    } catch {
      this.#file = null;
      this.#failed = true;
    }
  }

  close(): void {
    try {
      this.#file?.close();
    } catch {
      // best effort
    }
    this.#file = null;
    this.#failed = true;
  }
}
