/**
 * `db.checkpoint(dir)`: a consistent, openable copy of an open database as of the call (RocksDB's
 * Checkpoint). Opening the copy gives exactly the state the database had when the call was made:
 * every write issued before it (acknowledged or still queued: the queue is committed first), and
 * nothing issued after.
 *
 * What the copy is made of, captured in one synchronous turn of the database's thread (so no
 * write, flush install or compaction install falls in the middle), by `captureCheckpointSource`:
 *   - the tables of the current version, hard-linked (FileSystem.link: tables are never changed
 *     once written, so the copy and the original may share them), or copied where the file system
 *     cannot link (EXDEV across file systems, EPERM/ENOTSUP where it has no hard links);
 *   - the MANIFEST CURRENT names, copied up to the size it had (edits logged later are not the
 *     copy's), and a CURRENT of the copy's own naming it;
 *   - the WALs recovery would replay (numbered at or after the MANIFEST's log number), copied up to
 *     the size they had: what the memtables hold. Every record in them is committed and visible,
 *     since the queue was run first; the copy ends on a record boundary;
 *   - REGIONS, for a sharded database (tables of region i in `region-<i>/`, as in the original).
 *
 * Safe while writes go on (the async form copies in steps, yielding the thread between them): the
 * captured version stays referenced, so compaction does not delete its tables until the copy is
 * done (and then deletion catches up); the WALs and the MANIFEST are read through handles opened at
 * the capture, which stay readable if the database deletes or renames those files meanwhile.
 *
 * The target must not exist or be an empty directory; CURRENT is written last (temporary file,
 * synced, renamed, directory synced), so a copy cut short by a crash has no CURRENT and does not
 * open. On failure the files made so far are removed. LOCK and LOG are not copied: the copy makes
 * its own when opened. Owned by the database's thread; I/O through the FileSystem seam.
 */
import { TextEncoder } from 'node:util';
import { join, resolve } from 'node:path';
import { ErrorCode, invalidArgument, isSieveError, SieveError } from '../errors.js';
import { isNotFound, type FileSystem, type RandomAccessFile } from '../fs/file-system.js';
import { currentFileName, descriptorFileName, FileType, logFileName, parseFileName, sstTableFileName, tableFileName, tempFileName } from '../version/filenames.js';
import type { VersionSet } from '../version/version-set.js';
import { NUM_LEVELS } from '../version/version-edit.js';
import { REGIONS_FILE } from './db-files.js';
import { destroyDB } from './destroy.js';
import { regionDir } from './region.js';

export interface CheckpointOptions {
  /** Called after each file, and after each chunk of a file being copied. */
  onProgress?: (progress: CheckpointProgress) => void;
}

export interface CheckpointProgress {
  readonly filesDone: number;
  readonly filesTotal: number;
  /** Bytes of the files done (linked or copied) so far, out of `bytesTotal`. */
  readonly bytesDone: number;
  readonly bytesTotal: number;
  /** The file being made (a path in the target). */
  readonly file: string;
}

export interface CheckpointReport {
  /** The directory the copy is in. */
  readonly dir: string;
  /** The newest sequence number the copy holds. */
  readonly lastSequence: number;
  /** The MANIFEST the copy's CURRENT names (the original's name). */
  readonly manifest: string;
  readonly regions: number;
  /** Tables hard-linked and copied, and their bytes. */
  readonly tables: { readonly linked: number; readonly copied: number; readonly bytes: number };
  /** WALs copied (what the memtables held), and their bytes. */
  readonly wals: { readonly files: number; readonly bytes: number };
  /** Bytes written into the copy (everything but the linked tables). */
  readonly bytesCopied: number;
}

/** A file copied up to the size it had at the capture, through a handle opened then. */
interface HeldFile {
  readonly name: string;
  readonly size: number;
  readonly file: RandomAccessFile;
}

interface SourceTable {
  readonly region: number;
  /** `NNNNNN.ldb`, or LevelDB's older `NNNNNN.sst`: the copy keeps the name. */
  readonly name: string;
  readonly path: string;
  readonly size: number;
}

/** What a checkpoint copies, captured at one moment. `release()` it once the copy is done. */
export interface CheckpointSource {
  readonly dir: string;
  readonly regions: number;
  readonly lastSequence: number;
  readonly tables: readonly SourceTable[];
  readonly manifest: HeldFile;
  readonly wals: readonly HeldFile[];
  /** REGIONS's bytes (a sharded database), or undefined. */
  readonly regionsFile: Uint8Array | undefined;
  /** Closes the handles and drops the version reference; idempotent. */
  release(): void;
}

/**
 * Captures what a checkpoint of the database in `dir` copies, now. The caller (DBImpl) has
 * committed every queued write, and calls this in the same synchronous turn. `afterRelease` runs
 * when the source is released (to delete the files that became obsolete meanwhile).
 */
export function captureCheckpointSource(fs: FileSystem, dir: string, versions: VersionSet, regions: number, afterRelease: () => void): CheckpointSource {
  const version = versions.current.ref();
  const held: HeldFile[] = [];
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    for (const h of held) {
      try {
        h.file.close();
      } catch {
        // A read handle: nothing was written through it.
      }
    }
    version.unref();
    afterRelease();
  };
  try {
    const hold = (name: string): HeldFile => {
      const file = fs.openReadable(join(dir, name));
      const h = { name, size: file.size, file };
      held.push(h);
      return h;
    };
    const manifest = hold(descriptorFileName('', versions.manifestFileNumber));
    const walNumbers = fs
      .list(dir)
      .map((name) => parseFileName(name))
      .filter((p) => p?.type === FileType.LOG && versions.isLiveLog(p.number))
      .map((p) => p!.number)
      .sort((a, b) => a - b);
    const wals = walNumbers.map((n) => hold(logFileName('', n)));
    const tables: SourceTable[] = [];
    for (let region = 0; region < regions; region++) {
      const d = regionDir(dir, region);
      for (let level = 0; level < NUM_LEVELS; level++) {
        for (const f of version.files(region, level)) {
          let path = tableFileName(d, f.number);
          if (!fs.exists(path) && fs.exists(sstTableFileName(d, f.number))) path = sstTableFileName(d, f.number);
          tables.push({ region, name: path.slice(d.length + 1), path, size: f.fileSize });
        }
      }
    }
    const regionsPath = join(dir, REGIONS_FILE);
    let regionsFile: Uint8Array | undefined;
    try {
      regionsFile = fs.readFile(regionsPath);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    return { dir, regions, lastSequence: versions.lastSequence, tables, manifest, wals, regionsFile, release };
  } catch (err) {
    release();
    throw err;
  }
}

/** Errors of `link` that mean "this file system cannot link here": copy instead. */
const COPY_INSTEAD = new Set(['EXDEV', 'EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EMLINK', 'ENOSYS']);

function linkRefused(err: unknown): boolean {
  const code = (err as { cause?: { code?: unknown } } | null)?.cause?.code;
  return isSieveError(err, ErrorCode.IO_ERROR) && typeof code === 'string' && COPY_INSTEAD.has(code);
}

/** Bytes copied between two yields of the thread. */
const COPY_CHUNK = 1 << 20;

/** Targets of the checkpoints running in this process (resolved paths): one writer per target. */
const targetsInUse = new Set<string>();

/**
 * Checks that `target` may receive a checkpoint: a non-empty string naming nothing yet, or an
 * empty directory. Returns whether it exists. INVALID_ARGUMENT otherwise.
 */
export function checkTarget(fs: FileSystem, target: unknown): boolean {
  if (typeof target !== 'string' || target === '') throw invalidArgument('the checkpoint directory must be a non-empty string');
  if (!fs.exists(target)) return false;
  let names: string[];
  try {
    names = fs.list(target);
  } catch (err) {
    throw invalidArgument(`${target} already exists and is not a directory: a checkpoint goes to a new or empty directory`, { file: target, cause: err });
  }
  if (names.length > 0) {
    throw invalidArgument(`${target} already exists and is not empty (${names.length} entries): a checkpoint goes to a new or empty directory`, { file: target });
  }
  return true;
}

export function checkCheckpointOptions(options: unknown): CheckpointOptions {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object') throw invalidArgument('checkpoint options must be an object');
  const o = options as CheckpointOptions;
  for (const key of Object.keys(o)) if (key !== 'onProgress') throw invalidArgument(`unknown checkpoint option ${JSON.stringify(key)}`);
  if (o.onProgress !== undefined && typeof o.onProgress !== 'function') throw invalidArgument('option onProgress must be a function');
  return o;
}

/** What DBImpl gives a checkpoint: the capture, and whether the database closed since. */
export interface CheckpointHost {
  readonly fs: FileSystem;
  readonly closed: boolean;
  /** Commits the queued writes and captures the source (DBImpl.checkpointSource). */
  checkpointSource(): CheckpointSource;
}

/**
 * Makes the checkpoint of `host` in `target`, as steps: the generator yields between files and
 * between chunks of a copy (the async form gives the thread back there; the sync form runs on).
 * The source is captured before the first step runs, when this is called.
 */
export function checkpointSteps(host: CheckpointHost, target: string, options: CheckpointOptions): Generator<void, CheckpointReport> {
  const fs = host.fs;
  const existed = checkTarget(fs, target);
  const key = resolve(target);
  if (targetsInUse.has(key)) throw invalidArgument(`a checkpoint into ${target} is already being made`, { file: target });
  const source = host.checkpointSource();
  targetsInUse.add(key);
  return run(host, source, target, existed, options, key);
}

function* run(host: CheckpointHost, source: CheckpointSource, target: string, existed: boolean, options: CheckpointOptions, key: string): Generator<void, CheckpointReport> {
  const fs = host.fs;
  const made: string[] = [];
  const tableBytes = source.tables.reduce((s, t) => s + t.size, 0);
  const walBytes = source.wals.reduce((s, w) => s + w.size, 0);
  const filesTotal = source.tables.length + source.wals.length + 2 + (source.regionsFile !== undefined ? 1 : 0);
  const bytesTotal = tableBytes + walBytes + source.manifest.size;
  let filesDone = 0;
  let bytesDone = 0;
  const progress = (file: string, extra = 0): void => options.onProgress?.({ filesDone, filesTotal, bytesDone: bytesDone + extra, bytesTotal, file });
  const done = (file: string, bytes: number): void => {
    filesDone++;
    bytesDone += bytes;
    progress(file);
  };
  let bytesCopied = 0;

  /** Copies `size` bytes of `from` to the new file `to` in chunks, syncing it; yields between chunks. */
  function* copy(from: RandomAccessFile, size: number, to: string): Generator<void, void> {
    const out = fs.createWritable(to);
    made.push(to);
    try {
      const buf = new Uint8Array(Math.min(COPY_CHUNK, Math.max(size, 1)));
      for (let at = 0; at < size; ) {
        const n = from.readAt(buf, 0, Math.min(buf.length, size - at), at);
        if (n === 0) throw new SieveError(ErrorCode.IO_ERROR, `the file ended at ${at} bytes, short of the ${size} it had`, { file: to });
        out.append(buf, 0, n);
        at += n;
        bytesCopied += n;
        if (at < size) {
          progress(to, at);
          yield;
        }
      }
      out.sync();
    } finally {
      out.close();
    }
  }

  function writeSmall(to: string, bytes: Uint8Array): void {
    const out = fs.createWritable(to);
    made.push(to);
    try {
      out.append(bytes);
      out.sync();
    } finally {
      out.close();
    }
    bytesCopied += bytes.length;
  }

  let completed = false;
  try {
    fs.mkdir(target);
    for (let r = 1; r < source.regions; r++) fs.mkdir(regionDir(target, r));
    let linking = true;
    let linked = 0;
    let copied = 0;
    for (const t of source.tables) {
      yield;
      // A closed database no longer keeps its tables: another process may now delete them.
      if (host.closed) throw new SieveError(ErrorCode.CLOSED, 'the database was closed while its checkpoint was being made');
      const to = join(regionDir(target, t.region), t.name);
      if (linking) {
        try {
          fs.link(t.path, to);
          made.push(to);
          linked++;
          done(to, t.size);
          continue;
        } catch (err) {
          if (!linkRefused(err)) throw err;
          linking = false; // the same refusal for every table: copy the rest without asking
        }
      }
      const from = fs.openReadable(t.path);
      try {
        yield* copy(from, t.size, to);
      } finally {
        from.close();
      }
      copied++;
      done(to, t.size);
    }
    for (const w of source.wals) {
      yield;
      const to = join(target, w.name);
      yield* copy(w.file, w.size, to);
      done(to, w.size);
    }
    const manifestTo = join(target, source.manifest.name);
    yield* copy(source.manifest.file, source.manifest.size, manifestTo);
    done(manifestTo, source.manifest.size);
    if (source.regionsFile !== undefined) {
      writeSmall(join(target, REGIONS_FILE), source.regionsFile);
      done(join(target, REGIONS_FILE), 0);
    }
    for (let r = 1; r < source.regions; r++) fs.syncDir(regionDir(target, r));
    // CURRENT last, atomically: until it exists the directory is no database.
    const manifestNumber = parseFileName(source.manifest.name)!.number;
    const tmp = tempFileName(target, manifestNumber);
    writeSmall(tmp, new TextEncoder().encode(`${source.manifest.name}\n`));
    fs.syncDir(target);
    fs.rename(tmp, currentFileName(target));
    made[made.indexOf(tmp)] = currentFileName(target);
    fs.syncDir(target);
    done(currentFileName(target), 0);
    completed = true;
    return {
      dir: target,
      lastSequence: source.lastSequence,
      manifest: source.manifest.name,
      regions: source.regions,
      tables: { linked, copied, bytes: tableBytes },
      wals: { files: source.wals.length, bytes: walBytes },
      bytesCopied,
    };
  } finally {
    targetsInUse.delete(key);
    source.release();
    if (!completed) removeMade(fs, target, existed, made);
  }
}

/** Undoes a failed checkpoint: the files it made, and the directory if it made it. */
function removeMade(fs: FileSystem, target: string, existed: boolean, made: readonly string[]): void {
  try {
    if (!existed) {
      destroyDB(target, { fs });
      return;
    }
    for (const path of [...made].reverse()) fs.remove(path);
  } catch {
    // Left behind without a CURRENT: no database opens there. The original error is what matters.
  }
}

/** Runs `steps` to the end without yielding the thread (the sync twin). */
export function runStepsSync<T>(steps: Generator<void, T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** Runs `steps`, giving the thread back (setImmediate) at each step. */
export async function runSteps<T>(steps: Generator<void, T>): Promise<T> {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await new Promise<void>((resolveTurn) => setImmediate(resolveTurn));
  }
}
