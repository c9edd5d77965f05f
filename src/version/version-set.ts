/**
 * VersionSet: the database's file-set history — the current Version, the counters that must
 * survive restarts (next file number, last sequence, log numbers) and the MANIFEST that records
 * them (LevelDB's db/version_set.cc).
 *
 * On disk: CURRENT names the live MANIFEST-NNNNNN; the MANIFEST is a log (log-format.ts) of
 * VersionEdits whose replay gives the current state. `recover` replays it; the first
 * `logAndApply` after it starts a new MANIFEST with a snapshot of the whole state, then points
 * CURRENT at it (written to a temporary file, synced, renamed, directory synced), so a crash at
 * any moment leaves CURRENT naming a complete MANIFEST.
 *
 * Owned by the database's JavaScript thread; every method is synchronous.
 */
import { TextDecoder, TextEncoder } from 'node:util';
import { corruption, invalidArgument, isSieveError, type SieveError } from '../errors.js';
import { isNotFound, type FileSystem } from '../fs/file-system.js';
import { LogReader, type LogCorruption } from '../wal/log-reader.js';
import { LogWriter } from '../wal/log-writer.js';
import { currentFileName, descriptorFileName, tempFileName } from './filenames.js';
import { emptyVersion, Version, VersionBuilder } from './version.js';
import { NUM_LEVELS, VersionEdit } from './version-edit.js';
import { BYTEWISE_COMPARATOR_NAME } from '../format/comparator.js';

export class VersionSet {
  nextFileNumber = 2;
  manifestFileNumber = 0;
  lastSequence = 0;
  /** WALs numbered below this are already in tables. */
  logNumber = 0;
  /** LevelDB's previous log number (older databases); 0 when unused. */
  prevLogNumber = 0;

  /** True if WAL `number` may hold writes not yet in tables (LevelDB's rule in RecoverLogFiles). */
  isLiveLog(number: number): boolean {
    return number >= this.logNumber || number === this.prevLogNumber;
  }
  /** compactPointers[region][level]: where the next compaction of that level starts. */
  readonly compactPointers: (Uint8Array | undefined)[][];
  #current: Version;
  /** Versions some reader still references (the current one included). */
  readonly #live = new Set<Version>();
  #manifest: LogWriter | null = null;

  constructor(
    readonly dir: string,
    readonly fs: FileSystem,
    readonly numRegions: number,
    readonly comparatorName: string = BYTEWISE_COMPARATOR_NAME,
  ) {
    this.compactPointers = Array.from({ length: numRegions }, () => new Array(NUM_LEVELS).fill(undefined));
    this.#current = this.#install(emptyVersion(numRegions, this.#release));
  }

  get current(): Version {
    return this.#current;
  }

  /** Called after each version installed past the first (the database drops what it kept of the old one). */
  onInstall: (() => void) | null = null;

  readonly #release = (v: Version): void => {
    this.#live.delete(v);
  };

  #install(v: Version): Version {
    v.ref();
    this.#live.add(v);
    const old = this.#current as Version | undefined;
    this.#current = v;
    old?.unref();
    if (old !== undefined) this.onInstall?.();
    return v;
  }

  newFileNumber(): number {
    return this.nextFileNumber++;
  }

  /** Makes sure `n` is never handed out again (a file found on disk or in a WAL name). */
  markFileNumberUsed(n: number): void {
    if (this.nextFileNumber <= n) this.nextFileNumber = n + 1;
  }

  /** Every table file some live version names: these must not be deleted. */
  liveFiles(): Set<number> {
    const live = new Set<number>();
    for (const v of this.#live) for (const n of v.fileNumbers()) live.add(n);
    return live;
  }

  /** Writes a new, empty database's MANIFEST-000001 and CURRENT (LevelDB's NewDB). */
  createNew(): void {
    const edit = new VersionEdit();
    edit.comparator = this.comparatorName;
    edit.logNumber = 0;
    edit.nextFileNumber = 2;
    edit.lastSequence = 0;
    const manifest = descriptorFileName(this.dir, 1);
    const file = this.fs.createWritable(manifest);
    try {
      const writer = new LogWriter(file);
      writer.addRecord(edit.encode());
      writer.sync();
    } finally {
      file.close();
    }
    this.#setCurrent(1);
  }

  /**
   * Points CURRENT at MANIFEST-`manifestNumber`: a temporary file, synced; the directory synced
   * (so the MANIFEST's name and the temporary file's are durable before any rename can be); the
   * temporary file renamed over CURRENT; the directory synced. `renaming` is called just before
   * the rename: from then on CURRENT may name the new MANIFEST, whatever happens next.
   */
  #setCurrent(manifestNumber: number, renaming?: () => void): void {
    const tmp = tempFileName(this.dir, manifestNumber);
    const file = this.fs.createWritable(tmp);
    try {
      file.append(new TextEncoder().encode(`MANIFEST-${String(manifestNumber).padStart(6, '0')}\n`));
      file.sync();
    } finally {
      file.close();
    }
    this.fs.syncDir(this.dir);
    renaming?.();
    this.fs.rename(tmp, currentFileName(this.dir));
    this.fs.syncDir(this.dir);
  }

  /**
   * Replays CURRENT's MANIFEST. Any damaged record is CORRUPTION, whatever `paranoidChecks` says
   * (as LevelDB): an edit skipped would make its tables look obsolete, and they would be deleted.
   * Only what a crash leaves at the end is tolerated: a record cut short by the end of the file
   * (never synced, so never acted on) or zeroed space after the last record, reported to
   * `onTornTail`. Throws CORRUPTION for a missing or malformed CURRENT, a MANIFEST without the
   * required fields, or a comparator mismatch.
   */
  recover(onTornTail?: (c: LogCorruption & { file: string }) => void): void {
    const currentPath = currentFileName(this.dir);
    const current = new TextDecoder().decode(this.fs.readFile(currentPath));
    const match = /^MANIFEST-(\d+)\n$/.exec(current);
    if (!match) throw corruption('CURRENT does not name a MANIFEST', { file: currentPath });
    const manifestNumber = Number(match[1]);
    const manifestPath = descriptorFileName(this.dir, manifestNumber);
    let file;
    try {
      file = this.fs.openReadable(manifestPath);
    } catch (err) {
      if (isNotFound(err)) throw corruption(`CURRENT names ${manifestPath}, which does not exist`, { file: currentPath, cause: err });
      throw err;
    }
    const builder = new VersionBuilder(this.#current);
    let logNumber: number | undefined;
    let prevLogNumber: number | undefined;
    let nextFileNumber: number | undefined;
    let lastSequence: number | undefined;
    try {
      // A cut-short record or zeroed space is damage only if a record follows it; anything else
      // is damage at once.
      let tail: LogCorruption | undefined;
      const damaged = (c: LogCorruption): SieveError =>
        corruption(`MANIFEST record damaged: ${c.reason} (${c.bytes} bytes)`, { file: manifestPath, offset: c.offset });
      const reader = new LogReader(file, {
        onCorruption: (c) => {
          if (c.kind !== 'zeroed' && c.kind !== 'truncated') throw damaged(c);
          tail ??= c;
        },
      });
      for (let record = reader.readRecord(); record !== null; record = reader.readRecord()) {
        if (tail !== undefined) throw damaged(tail);
        const edit = VersionEdit.decode(record, manifestPath, reader.lastRecordOffset);
        if (edit.comparator !== undefined && edit.comparator !== this.comparatorName) {
          throw invalidArgument(`the database uses comparator ${edit.comparator}, not ${this.comparatorName}`);
        }
        builder.apply(edit, manifestPath);
        for (const p of edit.compactPointers) {
          if (p.region < this.numRegions) this.compactPointers[p.region]![p.level] = p.key;
        }
        logNumber = edit.logNumber ?? logNumber;
        prevLogNumber = edit.prevLogNumber ?? prevLogNumber;
        nextFileNumber = edit.nextFileNumber ?? nextFileNumber;
        lastSequence = edit.lastSequence ?? lastSequence;
      }
      if (tail !== undefined) {
        if (reader.fragmentsVerified > tail.fragmentsBefore) throw damaged(tail);
        onTornTail?.({ ...tail, file: manifestPath });
      }
    } catch (err) {
      if (isSieveError(err)) throw err;
      throw corruption('MANIFEST could not be read', { file: manifestPath, cause: err });
    } finally {
      file.close();
    }
    if (nextFileNumber === undefined) throw corruption('MANIFEST has no next-file-number entry', { file: manifestPath });
    if (logNumber === undefined) throw corruption('MANIFEST has no log-number entry', { file: manifestPath });
    if (lastSequence === undefined) throw corruption('MANIFEST has no last-sequence entry', { file: manifestPath });
    this.#install(builder.build(this.#release, manifestPath));
    this.manifestFileNumber = manifestNumber;
    this.nextFileNumber = nextFileNumber;
    this.logNumber = logNumber;
    this.prevLogNumber = prevLogNumber ?? 0;
    this.lastSequence = lastSequence;
    this.markFileNumberUsed(manifestNumber);
    this.markFileNumberUsed(logNumber);
  }

  /**
   * Records `edit` in the MANIFEST (synced) and installs the version it makes. Fills the edit's
   * log number, next file number and last sequence from this set when the edit leaves them unset.
   * On failure nothing is installed and the MANIFEST is abandoned (the next call starts a new one).
   */
  logAndApply(edit: VersionEdit): Version {
    if (edit.logNumber === undefined) edit.logNumber = this.logNumber;
    if (edit.prevLogNumber === undefined && this.prevLogNumber !== 0) edit.prevLogNumber = this.prevLogNumber;
    edit.nextFileNumber = this.nextFileNumber;
    edit.lastSequence = this.lastSequence;
    const builder = new VersionBuilder(this.#current);
    builder.apply(edit);
    const next = builder.build(this.#release);
    let newManifest = 0;
    let currentMayNameIt = false;
    try {
      if (this.#manifest === null) {
        newManifest = this.newFileNumber();
        edit.nextFileNumber = this.nextFileNumber;
        const writer = new LogWriter(this.fs.createWritable(descriptorFileName(this.dir, newManifest)));
        this.#manifest = writer;
        writer.addRecord(this.#snapshot().encode());
      }
      this.#manifest.addRecord(edit.encode());
      this.#manifest.sync();
      if (newManifest !== 0) {
        this.#setCurrent(newManifest, () => (currentMayNameIt = true));
        this.manifestFileNumber = newManifest;
      }
    } catch (err) {
      this.#closeManifest();
      // A MANIFEST that CURRENT may already name stays: it is complete (synced before the
      // rename), and removing it would leave CURRENT naming nothing.
      if (newManifest !== 0 && !currentMayNameIt) {
        try {
          this.fs.remove(descriptorFileName(this.dir, newManifest));
        } catch {
          // Left behind, it is an obsolete MANIFEST: the next cleanup removes it.
        }
      }
      throw err;
    }
    this.logNumber = edit.logNumber;
    if (edit.prevLogNumber !== undefined) this.prevLogNumber = edit.prevLogNumber;
    for (const p of edit.compactPointers) this.compactPointers[p.region]![p.level] = p.key;
    return this.#install(next);
  }

  /** An edit that recreates the whole current state (the first record of a new MANIFEST). */
  #snapshot(): VersionEdit {
    const edit = new VersionEdit();
    edit.comparator = this.comparatorName;
    this.compactPointers.forEach((levels, region) =>
      levels.forEach((key, level) => {
        if (key !== undefined) edit.setCompactPointer(level, key, region);
      }),
    );
    this.#current.regions.forEach((levels, region) =>
      levels.forEach((files, level) => {
        for (const f of files) edit.addFile(level, f, region);
      }),
    );
    return edit;
  }

  #closeManifest(): void {
    try {
      this.#manifest?.close();
    } catch {
      // Already failing; the original error is what the caller needs.
    }
    this.#manifest = null;
  }

  close(): void {
    const manifest = this.#manifest;
    this.#manifest = null;
    manifest?.close();
  }
}
