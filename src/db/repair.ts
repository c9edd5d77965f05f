/**
 * `repairDB`: rebuilds a database's MANIFEST from the files it finds, for a directory that no
 * longer opens (CURRENT missing, a damaged MANIFEST, a damaged table or WAL) — LevelDB's
 * RepairDB (db/repair.cc), with one change explained in repair-merge.ts (where the tables go).
 *
 *  1. Find files: the database directory and each region's sub-directory (REGIONS names the
 *     router of a sharded database); the directory lock is taken first (LOCKED while open).
 *     Files that a readable MANIFEST record retired — a deleted table, a WAL below a recorded
 *     log number — are set aside unread (repair-history.ts says why: they would bring deleted
 *     values back).
 *  2. Replay every other WAL, skipping damaged stretches and malformed batches (counted), into
 *     memtables (one per region, routed as the database routes), written out as new tables.
 *  3. Scan every table (repair-tables.ts): a sound one is kept as it is; a damaged one has its
 *     readable entries copied into a new table and is itself moved to `lost/`.
 *  4. Lay the tables out (repair-merge.ts): tables whose key ranges overlap are merged, so that
 *     every kept table fits one sorted level (the last) and lookups stay right.
 *  5. Move what could not be read (damaged tables and WALs) to `lost/` beside it — only now,
 *     when everything readable in them is in durable new tables, so a crash at any point leaves
 *     files a second repair recovers as much from.
 *  6. Write a fresh MANIFEST naming the kept tables (and retiring every other table number
 *     seen), with the largest sequence number seen, a next file number past every file, and a
 *     fresh log number (so no old WAL is replayed again); point CURRENT at it (temporary file,
 *     sync, rename, directory sync).
 *  7. Move the old MANIFESTs and the retired files of step 1 to `lost/`; remove what the new
 *     tables superseded (merged inputs, replayed WALs that read cleanly). A failure here is
 *     reported, not thrown: the database is already repaired.
 *
 * Until step 5 a failure removes every table the repair wrote and leaves the directory as it
 * was. The report says what was kept and what was dropped; LOG gets the same lines.
 *
 * Synchronous (the database core is); DB.repair wraps it. All I/O through `options.fs`.
 */
import { TextEncoder } from 'node:util';
import { basename, dirname, join } from 'node:path';
import { invalidArgument, isSieveError } from '../errors.js';
import { BYTEWISE_COMPARATOR_NAME } from '../format/comparator.js';
import type { FileSystem } from '../fs/file-system.js';
import { resolveOptions, type Options, type ResolvedOptions } from '../options.js';
import { builtInRouter } from '../shard/built-in-routers.js';
import type { RegionRouter } from '../shard/region-router.js';
import { currentFileName, descriptorFileName, FileType, lockFileName, logFileName, sstTableFileName, tableFileName, tempFileName } from '../version/filenames.js';
import { NUM_LEVELS, VersionEdit } from '../version/version-edit.js';
import { emptyVersion, VersionBuilder } from '../version/version.js';
import { LogWriter } from '../wal/log-writer.js';
import { type DatabaseFile, listDatabaseFiles, readRegions, REGIONS_FILE, regionDirsOnDisk } from './db-files.js';
import { InfoLog } from './info-log.js';
import { readManifestHistory } from './repair-history.js';
import { newRepairCounts, type RepairCounts, type RepairProblem, type RepairReport } from './repair-report.js';
import { mergeGroup, overlapGroups } from './repair-merge.js';
import { replayWal } from './repair-wal.js';
import { type RepairTable, scanTable, type TableBuildOptions } from './repair-tables.js';
import { regionDir } from './region.js';

export type { RepairProblem, RepairReport } from './repair-report.js';

export interface RepairOptions extends Options {
  /**
   * The router a sharded database was made with. Not needed for the built-in routers (their
   * name in REGIONS is enough) unless REGIONS itself is lost or damaged.
   */
  router?: RegionRouter;
}

/** The level every kept table goes to: they do not overlap, and the last level is never size-scored. */
const REPAIR_LEVEL = NUM_LEVELS - 1;

/** Rebuilds the database in `dir` (see the file comment). Throws LOCKED if it is open. */
export function repairDB(dir: string, options: RepairOptions = {}): RepairReport {
  if (typeof dir !== 'string' || dir === '') throw invalidArgument('dir must be a non-empty string');
  if (options === null || typeof options !== 'object') throw invalidArgument('options must be an object');
  const { router, ...rest } = options;
  const resolved = resolveOptions(rest);
  const fs = resolved.fs;
  if (!fs.exists(dir)) throw invalidArgument(`${dir} does not exist: nothing to repair`);
  // Before the lock, which would leave a LOCK file in a directory that is no database at all.
  const found = listDatabaseFiles(fs, dir, 1).some((f) => f.type === FileType.LOG || f.type === FileType.TABLE || f.type === FileType.DESCRIPTOR);
  if (!found && regionDirsOnDisk(fs, dir).length === 0) {
    throw invalidArgument(`${dir} holds no database files (no MANIFEST, WAL or table): nothing to repair`);
  }
  const lock = fs.lock(lockFileName(dir));
  const info = new InfoLog(fs, dir);
  try {
    return new Repairer(dir, resolved, router, info).run();
  } finally {
    info.close();
    lock.release();
  }
}

function isRouter(r: unknown): r is RegionRouter {
  const x = r as RegionRouter | null;
  return typeof x === 'object' && x !== null && typeof x.name === 'string' && typeof x.regionOf === 'function' && Array.isArray(x.regions) && x.regions.length >= 1;
}

class Repairer {
  readonly #dir: string;
  readonly #options: ResolvedOptions;
  readonly #fs: FileSystem;
  readonly #info: InfoLog;
  readonly #givenRouter: RegionRouter | undefined;
  readonly #build: TableBuildOptions;
  #regions = 1;
  #router: RegionRouter | undefined;
  /** REGIONS must be (re)written with this router's name: it was missing or damaged. */
  #rewriteRegions = false;
  #nextNumber = 1;
  #maxSequence = 0;
  /** Tables that may go into the new MANIFEST, per region. */
  readonly #pool: RepairTable[][] = [];
  /** Tables this repair wrote (removed if it fails before the new MANIFEST is installed). */
  readonly #created: RepairTable[] = [];
  /** Damaged files, for `lost/` (before the MANIFEST is written). */
  readonly #damaged: string[] = [];
  /** Files a readable MANIFEST record retired: not read, moved to `lost/` once CURRENT names the new MANIFEST. */
  readonly #obsolete: string[] = [];
  /** Files whose contents the new tables hold: removed once CURRENT names the new MANIFEST. */
  readonly #superseded: string[] = [];
  readonly #lost: string[] = [];
  readonly #problems: RepairProblem[] = [];
  readonly #counts: RepairCounts = newRepairCounts();

  constructor(dir: string, options: ResolvedOptions, router: RegionRouter | undefined, info: InfoLog) {
    if (router !== undefined && !isRouter(router)) throw invalidArgument('option router must be a RegionRouter (name, regions, regionOf)');
    this.#dir = dir;
    this.#options = options;
    this.#fs = options.fs;
    this.#info = info;
    this.#givenRouter = router;
    this.#build = {
      blockSize: options.blockSize,
      blockRestartInterval: options.blockRestartInterval,
      compression: options.compression,
      filterPolicy: options.filterPolicy,
      tableFilterPolicy: options.tableFilterPolicy,
      filterScope: options.filterScope,
    };
  }

  #newNumber = (): number => this.#nextNumber++;

  #problem(file: string, reason: string, offset?: number): void {
    this.#problems.push(offset === undefined ? { file, reason } : { file, offset, reason });
    this.#info.log(`repair: ${file}${offset === undefined ? '' : ` at ${offset}`}: ${reason}`);
  }

  run(): RepairReport {
    const files = this.#findFiles();
    const history = readManifestHistory(this.#fs, files.filter((f) => f.type === FileType.DESCRIPTOR));
    if (history.foreignComparator !== undefined) {
      const { name, file } = history.foreignComparator;
      throw invalidArgument(`the database uses comparator ${name}; sievekv orders keys by ${BYTEWISE_COMPARATOR_NAME} and cannot repair it`, { file });
    }
    const isObsolete = (f: DatabaseFile): boolean =>
      f.type === FileType.LOG
        ? f.number < history.logNumber && !history.prevLogNumbers.has(f.number)
        : f.type === FileType.TABLE && history.deletedTables.has(f.number);
    for (const f of files) {
      if (!isObsolete(f)) continue;
      this.#obsolete.push(f.path);
      if (f.type === FileType.LOG) this.#counts.walObsolete++;
      else this.#counts.tablesObsolete++;
      this.#info.log(`repair: ${f.path} is obsolete (a readable MANIFEST record retired it): not read, set aside`);
    }
    let edit: VersionEdit;
    try {
      for (const f of files.filter((x) => x.type === FileType.LOG && !isObsolete(x)).sort((a, b) => a.number - b.number)) this.#convertWal(f);
      for (const f of files.filter((x) => x.type === FileType.TABLE && !isObsolete(x))) this.#scanTable(f, files);
      for (let r = 0; r < this.#regions; r++) this.#layOut(r);
      for (let r = 0; r < this.#regions; r++) if (this.#created.some((t) => t.region === r)) this.#fs.syncDir(regionDir(this.#dir, r));
      edit = this.#edit(files);
    } catch (err) {
      for (const t of this.#created) this.#fs.remove(tableFileName(t.dir, t.meta.number));
      throw err;
    }
    for (const path of this.#damaged) this.#archive(path);
    this.#syncArchives();
    if (this.#rewriteRegions) this.#writeRegions();
    const manifest = this.#installManifest(edit);
    // The repair is done: what follows is tidying, and a failure there is reported, not thrown
    // (the next open deletes what the MANIFEST does not name).
    this.#tidy(() => {
      for (const f of files) if (f.type === FileType.DESCRIPTOR) this.#archive(f.path);
    });
    for (const path of this.#obsolete) this.#tidy(() => this.#archive(path), path);
    for (const path of this.#superseded) this.#tidy(() => this.#fs.remove(path), path);
    this.#tidy(() => {
      this.#syncArchives();
      this.#fs.syncDir(this.#dir);
    });
    return this.#report(manifest, edit);
  }

  #tidy(work: () => void, file = this.#dir): void {
    try {
      work();
    } catch (err) {
      if (!isSieveError(err)) throw err;
      this.#problem(file, `left in place: ${err.message}`);
    }
  }

  /** Step 1: the regions, the router, the files; refuses a non-bytewise comparator before any change. */
  #findFiles(): DatabaseFile[] {
    const fs = this.#fs;
    const regions = readRegions(fs, this.#dir);
    const given = this.#givenRouter;
    const subdirs = regionDirsOnDisk(fs, this.#dir);
    if (regions.kind === 'sharded') {
      if (given !== undefined && (given.name !== regions.routerName || given.regions.length !== regions.count)) {
        throw invalidArgument(`the database was made with router ${JSON.stringify(regions.routerName)} (${regions.count} regions), not ${JSON.stringify(given.name)} (${given.regions.length})`);
      }
      this.#regions = regions.count;
      this.#router = given ?? builtInRouter(regions.routerName);
    } else if (given !== undefined && given.regions.length > 1) {
      if (regions.kind === 'plain' && subdirs.length === 0 && this.#hasDatabaseFiles()) {
        throw invalidArgument(`${this.#dir} holds a plain (one-region) database, not one made with router ${JSON.stringify(given.name)}`);
      }
      this.#regions = given.regions.length;
      this.#router = given;
      this.#rewriteRegions = true;
    } else if (regions.kind === 'damaged' || subdirs.length > 0) {
      const why = regions.kind === 'damaged' ? `REGIONS is damaged (${regions.reason})` : `REGIONS is missing but region sub-directories exist`;
      throw invalidArgument(`${why}: pass the router the database was made with (DB.repair(dir, { router }))`);
    }
    const beyond = subdirs.filter((i) => i >= this.#regions);
    if (beyond.length > 0) this.#problem(regionDir(this.#dir, beyond[0]!), `region ${beyond[0]} is beyond the router's ${this.#regions} regions: left alone`);
    for (let r = 0; r < this.#regions; r++) this.#pool.push([]);

    const files = listDatabaseFiles(fs, this.#dir, this.#regions);
    for (const f of files) if (f.number >= this.#nextNumber) this.#nextNumber = f.number + 1;
    if (!files.some((f) => f.type === FileType.LOG || f.type === FileType.TABLE || f.type === FileType.DESCRIPTOR)) {
      throw invalidArgument(`${this.#dir} holds no database files (no MANIFEST, WAL or table): nothing to repair`);
    }
    if (this.#regions > 1 && this.#router === undefined) {
      const walData = files.some((f) => f.type === FileType.LOG && fs.size(f.path) > 0);
      if (walData) {
        throw invalidArgument(
          `router ${JSON.stringify(regions.kind === 'sharded' ? regions.routerName : '')} is not built in: pass it (DB.repair(dir, { router })) so the WAL's writes reach their regions`,
        );
      }
    }
    this.#info.log(`repair: ${files.length} files in ${this.#regions} region(s)`);
    return files;
  }

  #hasDatabaseFiles(): boolean {
    return listDatabaseFiles(this.#fs, this.#dir, 1).some((f) => f.type !== FileType.LOCK && f.type !== FileType.INFO_LOG);
  }

  /** Step 2: one WAL into new tables (repair-wal.ts); damage is skipped and counted. */
  #convertWal(f: DatabaseFile): void {
    const counts = this.#counts;
    counts.walFiles++;
    const replay = replayWal(f.path, {
      fs: this.#fs,
      regionOf: (key) => this.#regionOf(key),
      dirOf: (region) => regionDir(this.#dir, region),
      newNumber: this.#newNumber,
      build: this.#build,
      writeBufferSize: this.#options.writeBufferSize,
      onTable: (table) => this.#addCreated(table),
    });
    for (const d of replay.damage) this.#problem(d.file, d.reason, d.offset);
    counts.walRecords += replay.records;
    counts.walEntries += replay.entries;
    counts.walRecordsDropped += replay.dropped;
    counts.walBytesDropped += replay.bytesDropped;
    counts.entriesRead += replay.entries;
    if (replay.maxSequence > this.#maxSequence) this.#maxSequence = replay.maxSequence;
    this.#info.log(`repair: WAL ${f.path}: ${replay.records} records (${replay.entries} entries) replayed${replay.dropped > 0 ? `, ${replay.dropped} damaged stretches skipped` : ''}`);
    if (replay.dropped > 0) this.#damaged.push(f.path);
    else this.#superseded.push(f.path);
  }

  #regionOf(key: Uint8Array): number {
    if (this.#regions === 1) return 0;
    const r = this.#router!.regionOf(key);
    if (!Number.isInteger(r) || r < 0 || r >= this.#regions) throw invalidArgument(`router ${this.#router!.name} returned region ${String(r)} (the database has ${this.#regions})`);
    return r;
  }

  #addCreated(table: RepairTable): void {
    this.#created.push(table);
    this.#pool[table.region]!.push(table);
  }

  /** Step 3: one existing table. */
  #scanTable(f: DatabaseFile, files: readonly DatabaseFile[]): void {
    const counts = this.#counts;
    counts.tablesFound++;
    if (f.name.endsWith('.sst') && files.some((g) => g !== f && g.type === FileType.TABLE && g.region === f.region && g.number === f.number)) {
      this.#problem(f.path, `table ${f.number} exists as both .ldb and .sst: the .sst copy is set aside`);
      this.#damaged.push(f.path);
      return;
    }
    const scan = scanTable(this.#fs, { region: f.region, dir: f.dir, path: f.path, number: f.number }, this.#newNumber, this.#build);
    if (scan.kind === 'empty') {
      this.#superseded.push(f.path);
      return;
    }
    if (scan.kind === 'sound') {
      this.#pool[f.region]!.push(scan.table);
      counts.entriesRead += scan.table.entries;
      if (scan.table.maxSequence > this.#maxSequence) this.#maxSequence = scan.table.maxSequence;
      return;
    }
    counts.tablesDamaged++;
    for (const fault of scan.faults) this.#problem(f.path, `${fault.kind === 'footer' ? 'footer' : `${fault.kind} block`}: ${fault.reason}`, fault.offset);
    if (scan.unreadable) {
      counts.tablesUnreadable++;
      counts.bytesDropped += scan.bytes;
    } else {
      counts.blocksDropped += scan.droppedBlocks;
      counts.bytesDropped += scan.droppedBytes;
    }
    if (scan.table !== undefined) {
      this.#addCreated(scan.table);
      counts.entriesRead += scan.table.entries;
      if (scan.table.maxSequence > this.#maxSequence) this.#maxSequence = scan.table.maxSequence;
    }
    const kept = scan.table === undefined ? 'nothing readable' : `${scan.table.entries} entries copied to table ${scan.table.meta.number}`;
    this.#info.log(`repair: table ${f.path} damaged (${scan.droppedBlocks} data blocks unreadable${scan.unreadable ? ', footer or index unreadable' : ''}): ${kept}`);
    this.#damaged.push(f.path);
  }

  /** Step 4: merges the region's overlapping tables; the pool then holds disjoint tables only. */
  #layOut(region: number): void {
    const dir = regionDir(this.#dir, region);
    const kept: RepairTable[] = [];
    for (const group of overlapGroups(this.#pool[region]!)) {
      if (group.length === 1) {
        kept.push(group[0]!);
        continue;
      }
      const outcome = mergeGroup(this.#fs, dir, region, group, this.#newNumber, this.#build, this.#options.maxFileSize);
      this.#counts.tablesMerged += group.length;
      this.#counts.superseded += outcome.superseded;
      for (const t of outcome.outputs) {
        this.#created.push(t);
        kept.push(t);
      }
      for (const t of group) this.#superseded.push(this.#tablePath(t));
      this.#info.log(`repair: region ${region}: merged ${group.length} overlapping tables into ${outcome.outputs.length} (${outcome.superseded} superseded entries dropped)`);
    }
    this.#pool[region] = kept;
  }

  /** The file of `t`: `.ldb`, or `.sst` for a found table of LevelDB before 1.14. */
  #tablePath(t: RepairTable): string {
    const ldb = tableFileName(t.dir, t.meta.number);
    return t.created || this.#fs.exists(ldb) ? ldb : sstTableFileName(t.dir, t.meta.number);
  }

  /**
   * The new MANIFEST's one record, checked the way recovery will check it: the kept tables, and
   * the deletion of every other table number this repair saw, so that a later repair knows them
   * retired should one be left behind (a removal that failed).
   */
  #edit(files: readonly DatabaseFile[]): VersionEdit {
    const edit = new VersionEdit();
    edit.comparator = BYTEWISE_COMPARATOR_NAME;
    const kept = new Set<number>();
    this.#pool.forEach((tables, region) => {
      for (const t of tables) {
        edit.addFile(REPAIR_LEVEL, t.meta, region);
        kept.add(t.meta.number);
      }
    });
    const retired = new Map<number, number>();
    for (const f of files) if (f.type === FileType.TABLE && !kept.has(f.number)) retired.set(f.number, f.region);
    for (const t of this.#created) if (!kept.has(t.meta.number)) retired.set(t.meta.number, t.region);
    for (const [number, region] of retired) edit.deleteFile(REPAIR_LEVEL, number, region);
    const builder = new VersionBuilder(emptyVersion(this.#regions));
    builder.apply(edit);
    builder.build(); // throws CORRUPTION if kept tables overlapped: a repair bug, caught before any change
    return edit;
  }

  /** Moves `path` to `lost/` beside it (a free name: an earlier repair's file is never replaced). */
  #archive(path: string): void {
    const fs = this.#fs;
    const lostDir = join(dirname(path), 'lost');
    fs.mkdir(lostDir);
    let target = join(lostDir, basename(path));
    for (let i = 1; fs.exists(target); i++) target = join(lostDir, `${basename(path)}.${i}`);
    fs.rename(path, target);
    this.#lost.push(target);
    this.#info.log(`repair: moved ${path} to ${target}`);
  }

  #syncArchives(): void {
    const dirs = new Set<string>();
    for (const p of this.#lost) {
      dirs.add(dirname(p));
      dirs.add(dirname(dirname(p)));
    }
    for (const d of dirs) this.#fs.syncDir(d);
  }

  #writeRegions(): void {
    const router = this.#router!;
    const path = join(this.#dir, REGIONS_FILE);
    if (this.#fs.exists(path)) this.#archive(path);
    const file = this.#fs.createWritable(path);
    try {
      file.append(new TextEncoder().encode(`${router.name}\n${router.regions.length}\n`));
      file.sync();
    } finally {
      file.close();
    }
    this.#fs.syncDir(this.#dir);
    this.#info.log(`repair: wrote REGIONS for router ${router.name}`);
  }

  /** Step 6: the MANIFEST, then CURRENT (temporary file, sync, rename, directory sync). */
  #installManifest(edit: VersionEdit): string {
    const fs = this.#fs;
    const manifestNumber = this.#newNumber();
    // A fresh, empty WAL: the one the MANIFEST calls live must exist (db/recovery's check), and
    // every older WAL (replayed above) is then obsolete.
    edit.logNumber = this.#newNumber();
    fs.createWritable(logFileName(this.#dir, edit.logNumber)).close();
    edit.prevLogNumber = 0;
    edit.nextFileNumber = this.#nextNumber;
    edit.lastSequence = this.#maxSequence;
    const manifest = descriptorFileName(this.#dir, manifestNumber);
    const writer = new LogWriter(fs.createWritable(manifest));
    try {
      writer.addRecord(edit.encode());
      writer.sync();
    } finally {
      writer.close();
    }
    const tmp = tempFileName(this.#dir, manifestNumber);
    const file = fs.createWritable(tmp);
    try {
      file.append(new TextEncoder().encode(`${basename(manifest)}\n`));
      file.sync();
    } finally {
      file.close();
    }
    fs.rename(tmp, currentFileName(this.#dir));
    fs.syncDir(this.#dir);
    this.#info.log(`repair: CURRENT names ${basename(manifest)}: ${edit.newFiles.length} tables, last sequence ${edit.lastSequence}`);
    return manifest;
  }

  #report(manifest: string, edit: VersionEdit): RepairReport {
    const c = this.#counts;
    const kept = this.#pool.flat();
    const report: RepairReport = {
      dir: this.#dir,
      manifest,
      lastSequence: edit.lastSequence!,
      nextFileNumber: edit.nextFileNumber!,
      regions: this.#regions,
      tables: {
        found: c.tablesFound,
        damaged: c.tablesDamaged,
        merged: c.tablesMerged,
        obsolete: c.tablesObsolete,
        unreadable: c.tablesUnreadable,
        kept: kept.length,
        bytesKept: kept.reduce((s, t) => s + t.meta.fileSize, 0),
        blocksDropped: c.blocksDropped,
        bytesDropped: c.bytesDropped,
      },
      entries: { read: c.entriesRead, kept: kept.reduce((s, t) => s + t.entries, 0), superseded: c.superseded },
      wal: {
        files: c.walFiles,
        obsolete: c.walObsolete,
        records: c.walRecords,
        entries: c.walEntries,
        recordsDropped: c.walRecordsDropped,
        bytesDropped: c.walBytesDropped,
      },
      lost: this.#lost,
      problems: this.#problems,
      dataLost: c.tablesUnreadable > 0 || c.blocksDropped > 0 || c.walRecordsDropped > 0,
    };
    this.#info.log(
      `repair: done: kept ${report.tables.kept} tables (${report.tables.bytesKept} bytes, ${report.entries.kept} entries); ` +
        `${this.#lost.length} files moved to lost/${report.dataLost ? '; some data may have been lost' : ''}`,
    );
    return report;
  }
}

