/**
 * The info log (`LOG`, the previous one kept as `LOG.old`), as LevelDB keeps one: a human-readable
 * line per notable event — recovery, skipped damage, flushes, compactions, background errors.
 * Best effort: a failure to write it never fails the database.
 */
import type { FileSystem, WritableFile } from '../fs/file-system.js';
import { infoLogFileName, oldInfoLogFileName } from '../version/filenames.js';

const encoder = new TextEncoder();

export class InfoLog {
  #file: WritableFile | null = null;

  constructor(fs: FileSystem, dir: string) {
    try {
      const path = infoLogFileName(dir);
      if (fs.exists(path)) fs.rename(path, oldInfoLogFileName(dir));
      this.#file = fs.createWritable(path);
    } catch {
      this.#file = null;
    }
  }

  log(message: string): void {
    if (this.#file === null) return;
    try {
      this.#file.append(encoder.encode(`${new Date().toISOString()} ${message}\n`));
    } catch {
      this.#file = null;
    }
  }

  close(): void {
    try {
      this.#file?.close();
    } catch {
      // best effort
    }
    this.#file = null;
  }
}
