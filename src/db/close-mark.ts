/**
 * The close mark: the last line a close with no background error writes to the info log, naming
 * the MANIFEST that CURRENT points at and that MANIFEST's length. A writable open that finds the
 * directory as that close left it, once its own lock file is taken, does not look for another
 * program's lock on `LOCK` (src/fs/node-lock.ts): reading /proc/locks waits out an RCU grace
 * period in the kernel, 5-15 ms on the machines measured (BENCHMARKS.md, issue 10 session 27), a
 * fifth to a third of a whole reopen.
 *
 * Which holders the look still sees. LevelDB with its default info log renames `LOG` before it
 * takes its lock, so any LevelDB holding the directory then has ended the mark. Every LevelDB and
 * RocksDB writes a new MANIFEST and points CURRENT at it (or, LevelDB's `reuse_logs`, appends to
 * the MANIFEST) once its open has recovered, so one that has finished opening is seen too. What
 * is missed: a RocksDB whose info log is not `LOG` (the Node binding's default) or a LevelDB with
 * its own `info_log` while it is still in its open, between taking its lock and writing its
 * MANIFEST (a race, like two opens at the same instant, which neither side sees); a LevelDB with
 * its own `info_log` and `reuse_logs` until its first flush or compaction; and any program that
 * locks `LOCK` and writes none of these files.
 *
 * The mark is a hint: it only decides whether the look is made. No LOG, a LOG too short to hold
 * the mark, a torn or other last line, an unreadable CURRENT: the look is made.
 */
import { Buffer } from 'node:buffer';
import { join } from 'node:path';
import { readFully, type FileSystem } from '../fs/file-system.js';
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
    const file = fs.openReadable(infoLogFileName(dir));
    let tail: Uint8Array;
    try {
      const length = Math.min(file.size, TAIL_BYTES);
      tail = readFully(file, file.size - length, length);
      if (tail.length !== length) return false;
    } finally {
      file.close();
    }
    const match = MARK.exec(Buffer.from(tail.buffer, tail.byteOffset, tail.length).toString('latin1'));
    if (match === null) return false;
    const manifest = match[1]!;
    const current = Buffer.from(fs.readFile(currentFileName(dir))).toString('latin1');
    return current === `${manifest}\n` && fs.size(join(dir, manifest)) === Number(match[2]);
  } catch {
    return false; // a file that cannot be read: no hint, the look is made
  }
}
