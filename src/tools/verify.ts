/**
 * `verifyDB`: checks a database's files without opening it for writing (no lock, nothing
 * written), for `sievekv verify` and tests:
 *
 *   - CURRENT names a MANIFEST that exists;
 *   - the MANIFEST: every record's checksum, every VersionEdit decodes, the required fields are
 *     there, regions are in range, no table is added twice, the next file number is past every
 *     file, and at levels ≥ 1 each level's tables are in key order without overlapping;
 *   - every table the MANIFEST names (every table on disk when there is no readable MANIFEST):
 *     present, of the recorded size, every block's checksum and structure, key order within and
 *     across blocks, its filters and properties (tools/table-inspector.ts), and its keys inside
 *     the range the MANIFEST records;
 *   - every live WAL's records (checksums, and each write batch well formed).
 *
 * Each problem names the file, the offset where known, and the reason. Damage after the last good
 * record of the newest WAL — what a crash in the middle of a write leaves — is a note, not a
 * problem. Tables on disk the MANIFEST does not name are notes too (the next open deletes them).
 *
 * It takes no lock and writes nothing. On a database another process has open, files may change
 * or vanish while they are read (reported as problems that a second run would not find): `sievekv
 * verify` (recovery-commands.ts) runs it again when the writer moved meanwhile. I/O through the
 * FileSystem seam.
 */
import { TextDecoder } from 'node:util';
import { basename, join } from 'node:path';
import { invalidArgument, isSieveError } from '../errors.js';
import { BYTEWISE_COMPARATOR_NAME } from '../format/comparator.js';
import { encodeInternalKey, type ValueType } from '../format/internal-key.js';
import type { FileSystem } from '../fs/file-system.js';
import { NodeFileSystem } from '../fs/node-fs.js';
import { listDatabaseFiles, readRegions, type DatabaseFile } from '../db/db-files.js';
import { regionDir } from '../db/region.js';
import { currentFileName, FileType, parseFileName, sstTableFileName, tableFileName } from '../version/filenames.js';
import { compareInternal } from '../version/version.js';
import { NUM_LEVELS, VersionEdit, type FileMetaData } from '../version/version-edit.js';
import { LogReader, type LogCorruption } from '../wal/log-reader.js';
import { replayWal } from '../db/recovery.js';
import { bareMessage } from './error-text.js';
import { describeKey, TableInspector } from './table-inspector.js';

export interface VerifyProblem {
  readonly file: string;
  readonly offset?: number;
  readonly reason: string;
}

export interface VerifyProgress {
  readonly tablesDone: number;
  readonly tablesTotal: number;
  readonly bytesDone: number;
  readonly bytesTotal: number;
  /** The table just checked. */
  readonly file: string;
}

export interface VerifyOptions {
  /** @defaultValue the real file system */
  fs?: FileSystem;
  /** Called after each table. */
  onProgress?: (progress: VerifyProgress) => void;
}

export interface VerifyReport {
  readonly dir: string;
  /** No problems found. */
  readonly healthy: boolean;
  readonly problems: readonly VerifyProblem[];
  /** Findings that are not damage (a torn WAL tail, obsolete tables). */
  readonly notes: readonly VerifyProblem[];
  readonly regions: number;
  /** The MANIFEST CURRENT names, if any. */
  readonly manifest: string | undefined;
  readonly lastSequence: number | undefined;
  readonly tables: {
    readonly checked: number;
    readonly bytes: number;
    readonly entries: number;
    /** Tables per level (over all regions), from the MANIFEST. */
    readonly perLevel: readonly number[];
  };
  readonly wals: { readonly checked: number; readonly records: number; readonly entries: number };
}

/** A table the MANIFEST names. */
interface LiveTable {
  readonly region: number;
  readonly level: number;
  readonly meta: FileMetaData;
}

/** What replaying the MANIFEST gave: the live tables and the counters. */
interface ManifestState {
  readonly tables: Map<number, LiveTable>;
  logNumber?: number;
  prevLogNumber?: number;
  nextFileNumber?: number;
  lastSequence?: number;
  /** Every record read and decoded. */
  whole: boolean;
}

export function verifyDB(dir: string, options: VerifyOptions = {}): VerifyReport {
  const fs = options.fs ?? new NodeFileSystem();
  if (typeof dir !== 'string' || dir === '') throw invalidArgument('dir must be a non-empty string');
  if (!fs.exists(dir)) throw invalidArgument(`${dir} does not exist`);
  return new Verifier(dir, fs, options.onProgress).run();
}

class Verifier {
  readonly #dir: string;
  readonly #fs: FileSystem;
  readonly #onProgress: ((p: VerifyProgress) => void) | undefined;
  readonly #problems: VerifyProblem[] = [];
  readonly #notes: VerifyProblem[] = [];
  #regions = 1;
  #entries = 0;
  #walRecords = 0;
  #walEntries = 0;

  constructor(dir: string, fs: FileSystem, onProgress: ((p: VerifyProgress) => void) | undefined) {
    this.#dir = dir;
    this.#fs = fs;
    this.#onProgress = onProgress;
  }

  #problem(file: string, reason: string, offset?: number): void {
    this.#problems.push(offset === undefined ? { file, reason } : { file, offset, reason });
  }

  #note(file: string, reason: string, offset?: number): void {
    this.#notes.push(offset === undefined ? { file, reason } : { file, offset, reason });
  }

  run(): VerifyReport {
    const regions = readRegions(this.#fs, this.#dir);
    if (regions.kind === 'damaged') this.#problem(join(this.#dir, 'REGIONS'), regions.reason);
    if (regions.kind === 'sharded') this.#regions = regions.count;
    const files = listDatabaseFiles(this.#fs, this.#dir, this.#regions);
    const manifestPath = this.#readCurrent();
    const state = manifestPath === undefined ? undefined : this.#replayManifest(manifestPath);

    const onDisk = files.filter((f) => f.type === FileType.TABLE).map((f) => ({ ...f, size: this.#sizeOf(f.path) }));
    let tables: { region: number; level?: number; number: number; meta?: FileMetaData }[];
    if (state !== undefined) {
      tables = [...state.tables.values()].map((t) => ({ region: t.region, level: t.level, number: t.meta.number, meta: t.meta }));
      for (const f of onDisk) {
        if (!state.tables.has(f.number)) this.#note(f.path, 'table not named by the MANIFEST (obsolete: the next open deletes it)');
      }
    } else {
      tables = onDisk.map((f) => ({ region: f.region, number: f.number }));
    }
    tables.sort((a, b) => a.region - b.region || (a.level ?? 0) - (b.level ?? 0) || a.number - b.number);
    const sizeOf = (t: (typeof tables)[number]): number => t.meta?.fileSize ?? onDisk.find((f) => f.region === t.region && f.number === t.number)?.size ?? 0;
    const bytesTotal = tables.reduce((s, t) => s + sizeOf(t), 0);
    let bytesDone = 0;
    tables.forEach((t, i) => {
      const path = this.#checkTable(t.region, t.number, t.level, t.meta);
      bytesDone += sizeOf(t);
      this.#onProgress?.({ tablesDone: i + 1, tablesTotal: tables.length, bytesDone, bytesTotal, file: path });
    });

    const logs = files
      .filter((f) => f.type === FileType.LOG && f.region === 0)
      .filter((f) => state?.logNumber === undefined || !state.whole || f.number >= state.logNumber || f.number === state.prevLogNumber)
      .sort((a, b) => a.number - b.number);
    logs.forEach((f, i) => this.#checkWal(f, i === logs.length - 1));

    const perLevel = new Array<number>(NUM_LEVELS).fill(0);
    for (const t of state?.tables.values() ?? []) perLevel[t.level]!++;
    return {
      dir: this.#dir,
      healthy: this.#problems.length === 0,
      problems: this.#problems,
      notes: this.#notes,
      regions: this.#regions,
      manifest: manifestPath,
      lastSequence: state?.lastSequence,
      tables: { checked: tables.length, bytes: bytesDone, entries: this.#entries, perLevel },
      wals: { checked: logs.length, records: this.#walRecords, entries: this.#walEntries },
    };
  }

  #sizeOf(path: string): number {
    try {
      return this.#fs.size(path);
    } catch {
      return 0; // unreadable: the table check reports it
    }
  }

  /** The MANIFEST CURRENT names, or undefined (a problem said why). */
  #readCurrent(): string | undefined {
    const path = currentFileName(this.#dir);
    if (!this.#fs.exists(path)) {
      this.#problem(path, 'CURRENT is missing: the database does not open (sievekv repair rebuilds it)');
      return undefined;
    }
    let text: string;
    try {
      text = new TextDecoder().decode(this.#fs.readFile(path));
    } catch (err) {
      this.#problem(path, `cannot read CURRENT: ${(err as Error).message}`);
      return undefined;
    }
    const m = /^(MANIFEST-\d+)\n$/.exec(text);
    if (m === null) {
      this.#problem(path, `CURRENT does not name a MANIFEST: ${JSON.stringify(text.slice(0, 40))}`);
      return undefined;
    }
    const manifest = join(this.#dir, m[1]!);
    if (!this.#fs.exists(manifest)) {
      this.#problem(path, `CURRENT names ${m[1]}, which does not exist`);
      return undefined;
    }
    return manifest;
  }

  #replayManifest(path: string): ManifestState {
    const state: ManifestState = { tables: new Map(), whole: true };
    const before = this.#problems.length;
    let file;
    try {
      file = this.#fs.openReadable(path);
    } catch (err) {
      this.#problem(path, `cannot read the MANIFEST: ${(err as Error).message}`);
      state.whole = false;
      return state;
    }
    try {
      const reader = new LogReader(file, {
        onCorruption: (c: LogCorruption) => this.#problem(path, `damaged MANIFEST record: ${c.reason} (${c.bytes} bytes)`, c.offset),
      });
      for (let record = reader.readRecord(); record !== null; record = reader.readRecord()) {
        const offset = reader.lastRecordOffset;
        let edit: VersionEdit;
        try {
          edit = VersionEdit.decode(record, path, offset);
        } catch (err) {
          this.#problem(path, `not a VersionEdit: ${bareMessage(err)}`, offset);
          continue;
        }
        this.#applyEdit(state, edit, path, offset);
      }
    } catch (err) {
      if (!isSieveError(err)) throw err;
      this.#problem(path, `cannot read the MANIFEST: ${err.message}`);
    } finally {
      file.close();
    }
    for (const [field, value] of [
      ['next-file-number', state.nextFileNumber],
      ['log-number', state.logNumber],
      ['last-sequence', state.lastSequence],
    ] as const) {
      if (value === undefined) this.#problem(path, `the MANIFEST has no ${field} entry`);
    }
    this.#checkLevels(state, path);
    const next = state.nextFileNumber;
    if (next !== undefined) {
      const used = [...state.tables.keys(), state.logNumber ?? 0, parseFileName(basename(path))?.number ?? 0];
      const beyond = used.filter((n) => n >= next);
      if (beyond.length > 0) this.#problem(path, `next file number ${next} is not past file ${Math.max(...beyond)}: a new file would reuse its number`);
    }
    state.whole = this.#problems.length === before;
    return state;
  }

  #applyEdit(state: ManifestState, edit: VersionEdit, path: string, offset: number): void {
    if (edit.comparator !== undefined && edit.comparator !== BYTEWISE_COMPARATOR_NAME) {
      this.#problem(path, `comparator ${edit.comparator} is not ${BYTEWISE_COMPARATOR_NAME}: key order cannot be checked`, offset);
    }
    for (const d of edit.deletedFiles) {
      const t = state.tables.get(d.number);
      if (t !== undefined && t.region === d.region && t.level === d.level) state.tables.delete(d.number);
    }
    for (const a of edit.newFiles) {
      if (a.region >= this.#regions) {
        this.#problem(path, `table ${a.file.number} is in region ${a.region}, but the database has ${this.#regions}`, offset);
        continue;
      }
      const there = state.tables.get(a.file.number);
      if (there !== undefined) this.#problem(path, `table ${a.file.number} added again (already at level ${there.level}) without being deleted`, offset);
      if (compareInternal(a.file.smallest, a.file.largest) > 0) this.#problem(path, `table ${a.file.number}: smallest key is after its largest`, offset);
      state.tables.set(a.file.number, { region: a.region, level: a.level, meta: a.file });
    }
    state.logNumber = edit.logNumber ?? state.logNumber;
    state.prevLogNumber = edit.prevLogNumber ?? state.prevLogNumber;
    state.nextFileNumber = edit.nextFileNumber ?? state.nextFileNumber;
    state.lastSequence = edit.lastSequence ?? state.lastSequence;
  }

  /** Levels ≥ 1: tables in key order, not overlapping. */
  #checkLevels(state: ManifestState, path: string): void {
    for (let region = 0; region < this.#regions; region++) {
      for (let level = 1; level < NUM_LEVELS; level++) {
        const files = [...state.tables.values()]
          .filter((t) => t.region === region && t.level === level)
          .map((t) => t.meta)
          .sort((a, b) => compareInternal(a.smallest, b.smallest));
        for (let i = 1; i < files.length; i++) {
          const a = files[i - 1]!;
          const b = files[i]!;
          if (compareInternal(a.largest, b.smallest) >= 0) {
            const where = region === 0 ? '' : ` of region ${region}`;
            this.#problem(path, `level ${level}${where}: tables ${a.number} (.. ${describeKey(a.largest)}) and ${b.number} (${describeKey(b.smallest)} ..) overlap`);
          }
        }
      }
    }
  }

  /** Checks one table; returns its path. */
  #checkTable(region: number, number: number, level: number | undefined, meta: FileMetaData | undefined): string {
    const fs = this.#fs;
    const dir = regionDir(this.#dir, region);
    let path = tableFileName(dir, number);
    if (!fs.exists(path) && fs.exists(sstTableFileName(dir, number))) path = sstTableFileName(dir, number);
    if (!fs.exists(path)) {
      this.#problem(path, `table named by the MANIFEST (level ${level ?? '?'}) is missing`);
      return path;
    }
    let inspector: TableInspector;
    try {
      inspector = TableInspector.open(fs, path);
    } catch (err) {
      this.#problem(path, `cannot read the table: ${bareMessage(err)}`);
      return path;
    }
    try {
      if (meta !== undefined && inspector.fileSize !== meta.fileSize) {
        this.#problem(path, `the file has ${inspector.fileSize} bytes, the MANIFEST says ${meta.fileSize}`);
      }
      const insp = inspector.inspect();
      for (const f of insp.faults) this.#problem(path, `${f.kind} block${f.name !== undefined ? ` ${f.name}` : ''} (${f.size} bytes): ${f.reason}`, f.offset);
      this.#entries += insp.entries;
      if (meta !== undefined && insp.complete && insp.faults.length === 0 && insp.index.length > 0) this.#checkRange(inspector, insp.index, meta, path);
    } catch (err) {
      if (!isSieveError(err)) throw err;
      this.#problem(path, `cannot read the table: ${bareMessage(err)}`);
    } finally {
      inspector.close();
    }
    return path;
  }

  /** The table's first and last keys lie inside the range the MANIFEST records for it. */
  #checkRange(inspector: TableInspector, index: Parameters<TableInspector['entries']>[0], meta: FileMetaData, path: string): void {
    const internal = (e: { userKey: Uint8Array; sequence: bigint; type: ValueType }): Uint8Array | undefined =>
      e.sequence > BigInt(Number.MAX_SAFE_INTEGER) ? undefined : encodeInternalKey(e.userKey, Number(e.sequence), e.type);
    let first: Uint8Array | undefined;
    for (const e of inspector.entries([index[0]!])) {
      first = internal(e);
      break;
    }
    let last: Uint8Array | undefined;
    for (const e of inspector.entries([index[index.length - 1]!])) last = internal(e);
    if (first !== undefined && compareInternal(first, meta.smallest) < 0) {
      this.#problem(path, `first key ${describeKey(first)} is before the MANIFEST's smallest ${describeKey(meta.smallest)}`);
    }
    if (last !== undefined && compareInternal(last, meta.largest) > 0) {
      this.#problem(path, `last key ${describeKey(last)} is after the MANIFEST's largest ${describeKey(meta.largest)}`);
    }
  }

  /**
   * The WAL as an open would replay it (db/recovery.ts, paranoid): the first damage is a problem;
   * a torn tail of the newest WAL, what a crash leaves, is a note.
   */
  #checkWal(f: DatabaseFile, newest: boolean): void {
    try {
      replayWal(this.#fs, f.path, {
        newest,
        paranoid: true,
        info: { log: (message) => this.#note(f.path, message) },
        apply: (_record, _sequence, entries) => {
          this.#walEntries += entries.count;
          this.#walRecords++;
        },
      });
    } catch (err) {
      if (!isSieveError(err)) throw err;
      this.#problem(f.path, bareMessage(err), err.offset);
    }
  }
}
