/**
 * `destroyDB`: removes a database's files (LevelDB's DestroyDB). Only files with a database's
 * names are removed — CURRENT, LOCK, LOG, LOG.old, MANIFEST-*, *.log, *.ldb, *.sst, *.dbtmp,
 * REGIONS, MEMTABLE and MEMTABLE.tmp, and the tables in each region's sub-directory — and a
 * directory only once it is empty: a file of the user's (or repair's `lost/`) keeps it, and is
 * reported. The directory lock is taken first, so an open database (in this process or another)
 * is LOCKED and nothing is removed; the lock file goes last.
 *
 * A missing directory is not an error (nothing to destroy). All I/O goes through the FileSystem
 * seam, except removing an empty directory, which the seam has no call for: it is done through
 * the file system's own `removeDir` if it has one, through node:fs for the real file system, and
 * otherwise left in place (and reported).
 */
import { rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { invalidArgument, ioError } from '../errors.js';
import type { FileSystem } from '../fs/file-system.js';
import { NodeFileSystem } from '../fs/node-fs.js';
import { lockFileName, parseFileName } from '../version/filenames.js';
import { REGIONS_FILE } from './db-files.js';
import { MEMTABLE_IMAGE_FILE, MEMTABLE_IMAGE_TEMP } from './memtable-image.js';

export interface DestroyOptions {
  /** @defaultValue the real file system */
  fs?: FileSystem;
}

export interface DestroyReport {
  /** Paths removed (files, then directories). */
  readonly removed: readonly string[];
  /**
   * What is left in the directory: entries that are not the database's (a user's file, repair's
   * `lost/`), and a region directory kept by such a file (or by a file system that cannot remove
   * directories).
   */
  readonly kept: readonly string[];
  /** True if the database directory itself was removed. */
  readonly removedDirectory: boolean;
}

/** A file system that can remove an empty directory (an optional capability of the seam). */
interface DirectoryRemover {
  removeDir(dir: string): void;
}

function hasRemoveDir(fs: FileSystem): fs is FileSystem & DirectoryRemover {
  return typeof (fs as Partial<DirectoryRemover>).removeDir === 'function';
}

/** Removes the empty directory `dir` if the file system can; true if it is gone. */
function removeEmptyDir(fs: FileSystem, dir: string): boolean {
  if (fs.list(dir).length > 0) return false;
  try {
    if (hasRemoveDir(fs)) fs.removeDir(dir);
    else if (fs instanceof NodeFileSystem) rmdirSync(dir);
    else return false;
  } catch (err) {
    throw ioError(`remove directory failed: ${(err as NodeJS.ErrnoException).code ?? 'unknown'}`, { file: dir, cause: err });
  }
  return true;
}

/** True for a name `destroyDB` may remove from the database directory. */
function isDatabaseName(name: string): boolean {
  return name === REGIONS_FILE || name === MEMTABLE_IMAGE_FILE || name === MEMTABLE_IMAGE_TEMP || parseFileName(name) !== undefined;
}

/** Removes the database in `dir` (see the file comment). Throws LOCKED if it is open. */
export function destroyDB(dir: string, options: DestroyOptions = {}): DestroyReport {
  if (typeof dir !== 'string' || dir === '') throw invalidArgument('dir must be a non-empty string');
  if (options === null || typeof options !== 'object') throw invalidArgument('options must be an object');
  const fs = options.fs ?? new NodeFileSystem();
  if (!fs.exists(dir)) return { removed: [], kept: [], removedDirectory: false };
  const removed: string[] = [];
  const lockPath = lockFileName(dir);
  const lock = fs.lock(lockPath);
  try {
    for (const name of fs.list(dir).sort()) {
      // LOCK (and the file system's own lock files beside it) go after the lock is released.
      if (name === 'LOCK' || name.startsWith('LOCK.')) continue;
      const path = join(dir, name);
      const region = /^region-(\d+)$/.exec(name);
      if (region !== null && Number(region[1]) >= 1) destroyRegionDir(fs, path, removed);
      else if (isDatabaseName(name)) {
        fs.remove(path);
        removed.push(path);
      }
    }
  } finally {
    lock.release();
  }
  if (fs.exists(lockPath)) {
    fs.remove(lockPath);
    removed.push(lockPath);
  }
  const kept = fs.list(dir).sort().map((name) => join(dir, name));
  const removedDirectory = kept.length === 0 && removeEmptyDir(fs, dir);
  if (removedDirectory) removed.push(dir);
  return { removed, kept, removedDirectory };
}

/** A region's sub-directory: its database files go; it goes too once empty. */
function destroyRegionDir(fs: FileSystem, dir: string, removed: string[]): void {
  let names: string[];
  try {
    names = fs.list(dir);
  } catch {
    return; // not a directory: a user's file with a region's name, kept
  }
  for (const name of names.sort()) {
    if (parseFileName(name) === undefined) continue;
    const path = join(dir, name);
    fs.remove(path);
    removed.push(path);
  }
  if (removeEmptyDir(fs, dir)) removed.push(dir);
}
