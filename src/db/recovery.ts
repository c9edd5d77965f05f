/**
 * Recovery: the decisions `DB.open` makes about what it finds on disk before the database takes
 * writes. Called only by DBImpl's open, on the database's thread, with the directory locked.
 *
 * - A directory without CURRENT is a new database only if it holds no trace of one: a table, a
 *   non-empty WAL, or a MANIFEST past the first means CURRENT was lost, and creating a fresh
 *   database there would delete every table (CORRUPTION; `DB.repair` rebuilds it).
 * - The router a sharded database was made with is persisted in REGIONS and checked.
 * - WAL replay tells a torn tail from damage. A crash can only leave the end of the newest WAL
 *   incomplete: a record cut short by the end of the file, or space the file system allotted but
 *   never wrote (zeros from a sector boundary to the end), with nothing that verifies after it.
 *   That is dropped quietly (logged, and counted in `walTornBytes`). Anything else — a damaged record
 *   followed by any record whose checksum verifies, in the same block or a later one, or damage
 *   at the end of a WAL that is not the newest — is damage: CORRUPTION naming the file and offset
 *   under `paranoidChecks`, otherwise skipped and counted (records and bytes, in LOG and in
 *   `sievekv.stats`), and the WAL is kept in `lost/` rather than deleted.
 * - Where the replayed writes go (`mayFlushReplayInBackground`): usually into the background
 *   flush, as after a memtable switch, their WALs live until it installs; otherwise to level 0
 *   before the open returns, as LevelDB does.
 * - A read-only open (and `refresh()`) writes nothing and takes no lock, so a writer may move on
 *   while it reads: it compares `writerStamp` before and after, and reads again if it moved.
 */
import { TextDecoder, TextEncoder } from 'node:util';
import { join } from 'node:path';
import { ErrorCode, invalidArgument, isSieveError, SieveError } from '../errors.js';
import { type FileLock, isNotFound, readFully, type FileSystem, type RandomAccessFile } from '../fs/file-system.js';
import type { RegionRouter } from '../shard/region-router.js';
import { singleRegionRouter } from '../shard/region-router.js';
import { currentFileName, descriptorFileName, FileType, parseFileName } from '../version/filenames.js';
import { LogReader, type LogCorruption } from '../wal/log-reader.js';
import { BatchEntries, batchSequence } from '../wal/write-batch.js';
import { InfoLog } from './info-log.js';

/** Where damaged files that recovery skipped are kept (also used by `DB.repair`). */
export const LOST_DIR = 'lost';

/**
 * Throws CORRUPTION if `dir`, which has no CURRENT, holds what only a database that existed can
 * leave: a table (here or in a region's directory), a non-empty WAL, or a MANIFEST other than the
 * first one a new database writes before its CURRENT (a crash while creating leaves just that).
 */
export function checkNoDatabaseLeft(fs: FileSystem, dir: string, regionDirs: readonly string[]): void {
  let tables = 0;
  let logs = 0;
  let manifests = 0;
  for (const d of new Set([dir, ...regionDirs])) {
    if (d !== dir && !fs.exists(d)) continue;
    for (const name of fs.list(d)) {
      const parsed = parseFileName(name);
      if (parsed === undefined) continue;
      if (parsed.type === FileType.TABLE) tables++;
      else if (d === dir && parsed.type === FileType.LOG && fs.size(join(d, name)) > 0) logs++;
      else if (d === dir && parsed.type === FileType.DESCRIPTOR && parsed.number !== 1) manifests++;
    }
  }
  if (tables + logs + manifests === 0) return;
  const held: string[] = [];
  if (tables > 0) held.push(`${tables} table${tables === 1 ? '' : 's'}`);
  if (logs > 0) held.push(`${logs} WAL${logs === 1 ? '' : 's'}`);
  if (manifests > 0) held.push(manifests === 1 ? 'a MANIFEST' : `${manifests} MANIFESTs`);
  const list = held.length > 1 ? `${held.slice(0, -1).join(', ')} and ${held[held.length - 1]}` : held[0];
  throw new SieveError(ErrorCode.CORRUPTION, `CURRENT is missing; the directory holds ${list} (DB.repair can rebuild it)`, {
    file: join(dir, 'CURRENT'),
  });
}

/**
 * The router's name and region count are persisted in REGIONS (a plain database has none): a
 * reopen with another router — or a router on an existing plain database — is refused before
 * anything is written, since keys would be looked for in the wrong region. A new sharded
 * database writes REGIONS before CURRENT, so no crash leaves a database without it.
 */
export function checkRouter(fs: FileSystem, dir: string, router: RegionRouter, databaseExists: boolean): void {
  const path = join(dir, 'REGIONS');
  const want = `${router.name}\n${router.regions.length}\n`;
  if (fs.exists(path)) {
    const have = new TextDecoder().decode(fs.readFile(path));
    if (have !== want) {
      throw invalidArgument(
        `the database was created with router ${JSON.stringify(have.split('\n')[0])} (${have.split('\n')[1]} regions), not ${JSON.stringify(router.name)} (${router.regions.length})`,
      );
    }
    return;
  }
  if (router === singleRegionRouter) return; // a plain database: LevelDB's layout, no extra file
  if (databaseExists) {
    throw invalidArgument(`${dir} holds a plain (one-region) database, not one made with router ${JSON.stringify(router.name)}`);
  }
  const file = fs.createWritable(path);
  try {
    file.append(new TextEncoder().encode(want));
    file.sync();
  } finally {
    file.close();
  }
  fs.syncDir(dir);
}

/** What replaying one WAL found. */
export interface WalReplay {
  /** The highest sequence number applied (0 if none). */
  maxSequence: number;
  /** Records (or damaged stretches, each at least one record) skipped as damage. */
  skippedRecords: number;
  skippedBytes: number;
  /** Bytes of a torn tail dropped at the end of the newest WAL. */
  tornBytes: number;
}

export interface WalReplayOptions {
  /** True for the newest WAL that holds any bytes: only its end may be torn. */
  newest: boolean;
  paranoid: boolean;
  /** Where torn tails and skipped damage are reported (the LOG). */
  info: Pick<InfoLog, 'log'>;
  /**
   * Applies one verified batch record whose first entry is `sequence`; `entries` holds it decoded.
   * Both are borrowed: valid during the call only.
   */
  apply: (record: Uint8Array, sequence: number, entries: BatchEntries) => void;
  /**
   * The sequence numbers' chain across the WALs of one replay (pass the same object to each, in
   * order): see SequenceChain. Without it no gap is looked for.
   */
  chain?: SequenceChain;
}

/**
 * Where a replay expects the next batch's first sequence number. A writer numbers its batches
 * without a gap — each takes the sequence after the last one's entries, in one WAL and across
 * WALs (LevelDB's too) — so a batch numbered past `next` means batches before it are missing: a
 * WAL cut at a record boundary, or emptied, which reads as one ending cleanly. The replay treats
 * that as damage (CORRUPTION under paranoidChecks, else counted as a skipped record). `next` is -1
 * until the first batch is applied (or the sequence after a memtable image's last, when the open
 * took one), and again after skipped damage (which explains a gap after it).
 */
export interface SequenceChain {
  next: number;
}

/**
 * Replays the WAL at `path` through `apply`, in order. Throws CORRUPTION (file and offset) for
 * damage under `paranoid`; otherwise skips it and reports it in the result and the LOG.
 */
export function replayWal(fs: FileSystem, path: string, options: WalReplayOptions): WalReplay {
  const { paranoid, info } = options;
  const result: WalReplay = { maxSequence: 0, skippedRecords: 0, skippedBytes: 0, tornBytes: 0 };
  let pending: LogCorruption[] = [];
  const chain = options.chain;
  const skip = (stretches: readonly LogCorruption[], why: string): void => {
    // What the damage dropped leaves a gap: the chain starts again at the next batch applied.
    if (chain !== undefined) chain.next = -1;
    const first = stretches[0]!;
    if (paranoid) {
      throw new SieveError(ErrorCode.CORRUPTION, `WAL damaged: ${first.reason} (${first.bytes} bytes; ${why})`, { file: path, offset: first.offset });
    }
    for (const c of stretches) {
      info.log(`skipped damaged WAL bytes at ${path}:${c.offset} (${c.bytes} bytes): ${c.reason}; ${why}`);
      result.skippedRecords++;
      result.skippedBytes += c.bytes;
    }
  };
  const entries = new BatchEntries();
  const file = fs.openReadable(path);
  try {
    const reader = new LogReader(file, { onCorruption: (c) => pending.push(c) });
    for (let record = reader.readRecord(); record !== null; record = reader.readRecord()) {
      if (pending.length > 0) {
        skip(pending, 'good records follow');
        pending = [];
      }
      const offset = reader.lastRecordOffset;
      let count: number;
      try {
        count = entries.decode(record, path, offset);
      } catch (err) {
        if (paranoid || !isSieveError(err, 'CORRUPTION')) throw err;
        skip([{ offset, bytes: record.length, kind: 'content', reason: (err as Error).message, fragmentsBefore: 0 }], 'the record does not decode');
        continue;
      }
      const sequence = batchSequence(record, path, offset);
      if (chain !== undefined) {
        if (chain.next >= 0 && sequence > chain.next) {
          const missing = `sequence numbers ${chain.next} to ${sequence - 1}`;
          skip([{ offset, bytes: 0, kind: 'content', reason: `${missing} are missing before this batch`, fragmentsBefore: 0 }], 'a WAL before this point lost records');
        }
        chain.next = Math.max(chain.next, sequence + count);
      }
      options.apply(record, sequence, entries);
      if (count > 0) result.maxSequence = Math.max(result.maxSequence, sequence + count - 1);
    }
    if (pending.length > 0) {
      if (reader.fragmentsVerified > pending[0]!.fragmentsBefore) skip(pending, 'a record that verifies follows');
      else if (!options.newest) skip(pending, 'a newer WAL follows, so this is no torn tail');
      else if (!isTornTail(file, pending[0]!)) skip(pending, 'a whole record that does not verify is damage, not a cut');
      else {
        for (const c of pending) {
          info.log(`dropped torn WAL tail at ${path}:${c.offset} (${c.bytes} bytes): ${c.reason}`);
          result.tornBytes += c.bytes;
        }
      }
    }
  } finally {
    file.close();
  }
  return result;
}

/**
 * A replay fills one memtable with up to this many write buffers before it writes it to level 0
 * and goes on with a fresh one. What a closed database left in its WALs fits: the memtable that
 * was being flushed and the one taking writes, each a write buffer and a batch past it — so the
 * usual reopen flushes in the background. More (WALs written with a larger writeBufferSize, or
 * left by several opens that each closed before their flush installed) is flushed during the open.
 */
export const REPLAY_LIMIT_WRITE_BUFFERS = 3;

/** What the open found replaying its WALs (see mayFlushReplayInBackground). */
export interface WalsReplayed {
  /** The replay outgrew REPLAY_LIMIT_WRITE_BUFFERS and wrote tables while it ran. */
  readonly flushedDuringReplay: boolean;
  /** Bytes of a torn tail dropped. */
  readonly tornBytes: number;
  /** WALs with damage skipped (paranoidChecks off). */
  readonly damagedWals: number;
  /** The MANIFEST's previous log number (non-zero only in a database an old LevelDB wrote). */
  readonly prevLogNumber: number;
  /**
   * The MANIFEST's last sequence is past every batch replayed (and the memtable image's): a power
   * loss took writes that were never synced from the WALs' end, after an install had logged them.
   */
  readonly sequenceAhead: boolean;
}

/**
 * Whether the memtables a replay filled may be flushed in the background, read meanwhile as the
 * immutable memtable, with the WALs they came from staying live until that flush installs (the
 * state after a memtable switch, so a crash meanwhile replays them again). That needs the WALs to
 * be replayable again as they are, and the MANIFEST's log number to name the oldest of them:
 * - no torn tail was dropped: the WAL it ended would no longer be the newest once a fresh one
 *   takes writes, and at the next open its tail would read as damage;
 * - no damage was skipped: such a WAL moves to `lost/` (and its replay would report it again);
 * - no table was written during the replay: it holds part of a WAL that would stay live, whose
 *   entries a crash would then replay a second time;
 * - no previous log number: the log number alone must say which WALs are live;
 * - the MANIFEST's last sequence is not past what was replayed: the fresh WAL's first batch then
 *   numbers past a hole, and with these WALs replayed before it the next open would read the hole
 *   as batches lost (SequenceChain), on a healthy database.
 * Otherwise the open writes the memtables to level 0 itself (LevelDB's way) and starts clean.
 */
export function mayFlushReplayInBackground(replayed: WalsReplayed): boolean {
  return (
    !replayed.flushedDuringReplay && replayed.tornBytes === 0 && replayed.damagedWals === 0 && replayed.prevLogNumber === 0 && !replayed.sequenceAhead
  );
}

/** fdatasyncs the file at `path` (a WAL a replay read, which the previous process may not have synced). */
export function syncFile(fs: FileSystem, path: string): void {
  const file = fs.openAppendable(path);
  try {
    file.sync();
  } finally {
    file.close();
  }
}

/** Unwritten space reads as zeros from a sector boundary on: what a crash leaves past the last write. */
const SECTOR = 512;

/**
 * True if the stretch `first` reported at the end of the newest WAL is what a crash can leave: a
 * record cut short by the end of the file, or bytes that are zero from a sector boundary (or from
 * the stretch's start) to the end of the file — space the file system allotted but never wrote.
 * A whole record whose checksum fails with no such zeros is damage.
 */
function isTornTail(file: RandomAccessFile, first: LogCorruption): boolean {
  if (first.kind === 'truncated') return true;
  const from = first.offset;
  const bytes = readFully(file, from, file.size - from);
  let zerosFrom = bytes.length;
  while (zerosFrom > 0 && bytes[zerosFrom - 1] === 0) zerosFrom--;
  if (zerosFrom === bytes.length) return false; // ends in a written byte
  return zerosFrom === 0 || (from + zerosFrom) % SECTOR === 0;
}

/** Moves `name` of `dir` into `dir/lost/`, where damage that recovery skipped is kept for a person to look at. */
export function moveToLost(fs: FileSystem, dir: string, name: string): void {
  const lost = join(dir, LOST_DIR);
  fs.mkdir(lost);
  fs.rename(join(dir, name), join(lost, name));
  fs.syncDir(dir);
  fs.syncDir(lost);
}

/** A read-only database holds no lock: releasing this one does nothing. */
export const NO_LOCK: FileLock = { release() {} };

/** A read-only database's info log: it writes no LOG (what it finds is in `sievekv.stats`). */
export class SilentInfoLog extends InfoLog {
  override log(): void {}
  override close(): void {}
}

/**
 * What a read-only load compares before and after it reads, to know that the writer did not move
 * meanwhile: CURRENT's contents and the size of the MANIFEST it names. A writer records every
 * change in the MANIFEST (or a new MANIFEST that CURRENT then names) before it deletes a file
 * the change retires — a WAL now in a table, a table compacted away — so an unchanged stamp means
 * that every file the load found missing was missing in the state it read: damage, not a race.
 */
export function writerStamp(fs: FileSystem, dir: string): string {
  let current: string;
  try {
    current = new TextDecoder().decode(fs.readFile(currentFileName(dir)));
  } catch (err) {
    if (isNotFound(err)) return 'no CURRENT';
    throw err;
  }
  const match = /^MANIFEST-(\d+)\n$/.exec(current);
  if (match === null) return current;
  let size = -1;
  try {
    size = fs.size(descriptorFileName(dir, Number(match[1])));
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  return `${current.trim()} ${size}`;
}
