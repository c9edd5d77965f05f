/**
 * The close mark: the last line a clean close writes to the info log, naming the MANIFEST that
 * CURRENT points at and that MANIFEST's length. An open that finds the directory as that close
 * left it need not look for another program's lock on `LOCK` (src/fs/node-lock.ts): reading
 * /proc/locks waits for an RCU grace period in the kernel, 5-15 ms on the machines measured
 * (BENCHMARKS.md, issue 10 session 27), a fifth to a third of a whole reopen.
 *
 * Why the mark tells that no LevelDB or RocksDB holds the directory: both, opening a directory,
 * rename `LOG` to an old name and start a new one, and write a new MANIFEST and point CURRENT at it
 * (LevelDB's `reuse_logs` keeps the MANIFEST but still rewrites `LOG`). So after one of them opened
 * it, `LOG` no longer ends in the mark, or CURRENT or the MANIFEST no longer match it, and the open
 * looks for the lock. What it misses: a program that takes a lock on `LOCK` and writes none of
 * those files (a LevelDB opened with both `reuse_logs` and its own `info_log` changes none of them
 * until its first flush or compaction).
 *
 * The mark is a hint, never trusted for more: it only decides whether the lock check runs. A LOG
 * too short to hold it, a torn or other last line, an unreadable CURRENT: the check runs.
 */
import { Buffer } from 'node:buffer';
import { join } from 'node:path';
import type { FileSystem } from '../fs/file-system.js';
import { currentFileName, infoLogFileName } from '../version/filenames.js';

/** The bytes of `LOG`'s end read for the mark: more than the longest mark line. */
const TAIL_BYTES = 160;
const MARK = /(?:^|\n)\S+ closed: (MANIFEST-\d+), (\d+) bytes\n$/;

/** The message of the mark's line (InfoLog prefixes the time): `closed: MANIFEST-000007, 1234 bytes`. */
export function closeMark(manifestName: string, manifestBytes: number): string {
  return `closed: ${manifestName}, ${manifestBytes} bytes`;
}

/**
 * True if `dir`'s info log ends in a close mark whose MANIFEST is the one CURRENT names and is as
 * long as the mark says: nothing has opened the database since a clean close. False on any doubt.
 */
export function closedAsMarked(fs: FileSystem, dir: string): boolean {
  try {
    const logPath = infoLogFileName(dir);
    if (!fs.exists(logPath)) return false;
    const file = fs.openReadable(logPath);
    let tail: string;
    try {
      const length = Math.min(file.size, TAIL_BYTES);
      const bytes = new Uint8Array(length);
      let done = 0;
      while (done < length) {
        const n = file.readAt(bytes, done, length - done, file.size - length + done);
        if (n === 0) return false;
        done += n;
      }
      tail = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1');
    } finally {
      file.close();
    }
    const match = MARK.exec(tail);
    if (match === null) return false;
    const [, manifest, bytes] = match as unknown as [string, string, string];
    const current = Buffer.from(fs.readFile(currentFileName(dir))).toString('latin1');
    return current === `${manifest}\n` && fs.size(join(dir, manifest)) === Number(bytes);
  } catch {
    return false;
  }
}
