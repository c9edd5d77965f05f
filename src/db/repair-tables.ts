/**
 * Repair's table work (repair.ts runs it): `TableOutput` writes one new table and learns what
 * the MANIFEST needs of it; `scanTable` reads one existing table block by block and either keeps
 * it as it is (every block sound) or salvages its readable entries into a new table, as
 * LevelDB's repairer does (db/repair.cc ScanTable / RepairTable).
 *
 * "Sound" is the table inspector's verdict (tools/table-inspector.ts): every block's checksum,
 * compression and structure, key order within and across blocks, each known filter holding every
 * key, the properties block agreeing with the data. A table with a fault in a data block loses
 * that block's entries and keeps the rest; one with a fault elsewhere (a filter, the properties,
 * the metaindex) loses nothing but is rewritten, so that it reads cleanly; one whose footer or
 * index is unreadable loses everything (nothing says where its blocks are). The damaged original
 * is not touched here: the caller moves it to `lost/`.
 *
 * Synchronous, on the caller's thread; all I/O through the FileSystem seam.
 */
import { isSieveError } from '../errors.js';
import { compareInternalKeys, encodeInternalKey, INTERNAL_KEY_TRAILER_SIZE, readSequence, type ValueType } from '../format/internal-key.js';
import type { FileSystem, WritableFile } from '../fs/file-system.js';
import { TableBuilder } from '../sstable/table-builder.js';
import { bareMessage } from '../tools/error-text.js';
import { type BlockFault, TableInspector, type TableInspection } from '../tools/table-inspector.js';
import { tableFileName } from '../version/filenames.js';
import type { FileMetaData } from '../version/version-edit.js';
import type { ResolvedOptions } from '../options.js';

/** How repair builds tables: the database's options. */
export type TableBuildOptions = Pick<
  ResolvedOptions,
  'blockSize' | 'blockRestartInterval' | 'compression' | 'filterPolicy' | 'tableFilterPolicy' | 'filterScope'
>;

/** A table the repaired database may name, with what repair learned reading or writing it. */
export interface RepairTable {
  readonly region: number;
  /** The directory it is in (its region's). */
  readonly dir: string;
  readonly meta: FileMetaData;
  readonly entries: number;
  /** The largest sequence number of its entries. */
  readonly maxSequence: number;
  /** Written by this repair (so removed if the repair fails). */
  readonly created: boolean;
}

/**
 * One new table `dir/NNNNNN.ldb`. Legal call order: `add`* then `finish` once, or `abandon`.
 * `add` copies what it is given; keys must ascend (a key not after the previous one is refused,
 * not written: a duplicate or a damaged order must not reach the builder).
 */
export class TableOutput {
  readonly path: string;
  readonly #file: WritableFile;
  readonly #builder: TableBuilder;
  #last: Uint8Array | undefined;
  #entries = 0;
  #maxSequence = 0;

  constructor(
    readonly fs: FileSystem,
    readonly dir: string,
    readonly region: number,
    readonly number: number,
    options: TableBuildOptions,
  ) {
    this.path = tableFileName(dir, number);
    this.#file = fs.createWritable(this.path);
    this.#builder = new TableBuilder(this.#file, {
      blockSize: options.blockSize,
      blockRestartInterval: options.blockRestartInterval,
      compression: options.compression,
      ...(options.filterPolicy !== null ? { filterPolicy: options.filterPolicy } : {}),
      ...(options.tableFilterPolicy !== null ? { tableFilterPolicy: options.tableFilterPolicy } : {}),
      filterScope: options.filterScope,
    });
  }

  get entries(): number {
    return this.#entries;
  }

  /** The bytes written so far (the table's size once finished). */
  get fileSize(): number {
    return this.#builder.fileSize;
  }

  /** Adds the entry unless `internalKey` is not after the last one added; true if added. */
  add(internalKey: Uint8Array, value: Uint8Array): boolean {
    const last = this.#last;
    if (last !== undefined && compareInternalKeys(last, 0, last.length, internalKey, 0, internalKey.length) >= 0) return false;
    this.#builder.add(internalKey, value);
    this.#last = internalKey.slice();
    this.#entries++;
    const seq = readSequence(internalKey, internalKey.length);
    if (seq > this.#maxSequence) this.#maxSequence = seq;
    return true;
  }

  /**
   * Finishes, syncs and closes the table; undefined (and the file removed) if nothing was added.
   * The caller syncs the directory before a MANIFEST names it.
   */
  finish(): RepairTable | undefined {
    if (this.#entries === 0) {
      this.abandon();
      return undefined;
    }
    try {
      this.#builder.finish();
      this.#file.sync();
      this.#file.close();
    } catch (err) {
      this.abandon();
      throw err;
    }
    const b = this.#builder;
    return {
      region: this.region,
      dir: this.dir,
      meta: { number: this.number, fileSize: b.fileSize, smallest: b.smallestKey!.slice(), largest: b.largestKey!.slice() },
      entries: this.#entries,
      maxSequence: this.#maxSequence,
      created: true,
    };
  }

  /** Gives up: closes and removes the file. Never throws. */
  abandon(): void {
    try {
      this.#builder.abandon();
    } catch {
      // already finished or failed
    }
    try {
      this.#file.close();
    } catch {
      // nothing more to do
    }
    try {
      this.fs.remove(this.path);
    } catch {
      // the caller reports the original failure
    }
  }
}

/** What reading one existing table found. */
export type TableScan =
  /** A sound table without entries (LevelDB never writes one): nothing to keep. */
  | { readonly kind: 'empty' }
  /** Every block sound: the table is kept as it is. */
  | { readonly kind: 'sound'; readonly table: RepairTable; readonly bytes: number }
  /**
   * Damaged: the readable entries were copied into `table` (undefined when none were), the
   * original must go to `lost/`. `droppedBlocks` data blocks (`droppedBytes` stored bytes) were
   * unreadable; `unreadable`: the footer or index was, so nothing could be read.
   */
  | {
      readonly kind: 'damaged';
      readonly table: RepairTable | undefined;
      readonly bytes: number;
      readonly faults: readonly BlockFault[];
      readonly droppedBlocks: number;
      readonly droppedBytes: number;
      readonly unreadable: boolean;
    };

/** Where a table being scanned is, and where a salvaged copy goes. */
export interface TableSource {
  readonly region: number;
  readonly dir: string;
  readonly path: string;
  readonly number: number;
}

/**
 * Reads the table at `source.path` (see the file comment). `newNumber` gives the number of the
 * salvaged copy, asked for only when one is written. Damage is the result, never thrown — a table
 * that cannot be opened or read is `unreadable`, a data block that cannot be read is dropped —
 * but a failure to write the salvaged copy (a full disk) is thrown: the caller must stop.
 */
export function scanTable(fs: FileSystem, source: TableSource, newNumber: () => number, options: TableBuildOptions): TableScan {
  let inspector: TableInspector;
  try {
    inspector = TableInspector.open(fs, source.path);
  } catch (err) {
    if (!isSieveError(err)) throw err;
    return unreadableTable(0, `cannot open the table: ${bareMessage(err)}`);
  }
  let output: TableOutput | undefined;
  try {
    let insp: TableInspection;
    try {
      insp = inspector.inspect();
    } catch (err) {
      // A read that failed (a bad sector): nothing of the table can be trusted.
      if (!isSieveError(err)) throw err;
      return unreadableTable(inspector.fileSize, `cannot read the table: ${bareMessage(err)}`);
    }
    const sound = insp.complete && insp.faults.length === 0;
    const badData = new Set(insp.faults.filter((f) => f.kind === 'data').map((f) => f.offset));
    const unreadable = insp.index.length === 0 && !insp.complete;
    let droppedBlocks = 0;
    let droppedBytes = 0;
    let entries = 0;
    let maxSequence = 0;
    let smallest: Uint8Array | undefined;
    let largest: Uint8Array | undefined;
    if (!sound && !unreadable) output = new TableOutput(fs, source.dir, source.region, newNumber(), options);
    for (const block of insp.index) {
      if (badData.has(block.offset)) {
        droppedBlocks++;
        droppedBytes += block.size;
        continue;
      }
      // Read the block's entries first: a block that fails now (it was not walked when the
      // metaindex stopped the inspection) is dropped whole, never half.
      let decoded: { key: Uint8Array; value: Uint8Array }[];
      try {
        decoded = [];
        for (const e of inspector.entries([block])) {
          if (e.sequence > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError('sequence number past 2^53 - 1');
          decoded.push({ key: encodeInternalKey(e.userKey, Number(e.sequence), e.type as ValueType), value: e.value });
        }
      } catch (err) {
        if (!isSieveError(err) && !(err instanceof RangeError)) throw err;
        droppedBlocks++;
        droppedBytes += block.size;
        continue;
      }
      for (const { key, value } of decoded) {
        if (output !== undefined && !output.add(key, value)) continue;
        if (output === undefined && smallest === undefined) smallest = key;
        largest = key;
        entries++;
        const seq = readSequence(key, key.length);
        if (seq > maxSequence) maxSequence = seq;
      }
    }
    if (sound) {
      if (smallest === undefined || largest === undefined) {
        return { kind: 'empty' };
      }
      const table: RepairTable = {
        region: source.region,
        dir: source.dir,
        meta: { number: source.number, fileSize: insp.fileSize, smallest, largest },
        entries,
        maxSequence,
        created: false,
      };
      return { kind: 'sound', table, bytes: insp.fileSize };
    }
    const table = output?.finish();
    output = undefined;
    return { kind: 'damaged', table, bytes: insp.fileSize, faults: insp.faults, droppedBlocks, droppedBytes, unreadable };
  } catch (err) {
    output?.abandon();
    throw err;
  } finally {
    inspector.close();
  }
}

function unreadableTable(bytes: number, reason: string): TableScan {
  const fault: BlockFault = { kind: 'footer', offset: 0, size: bytes, reason };
  return { kind: 'damaged', table: undefined, bytes, faults: [fault], droppedBlocks: 0, droppedBytes: 0, unreadable: true };
}

/** The user key of an internal key (a view). */
export function userKeyOf(internalKey: Uint8Array): Uint8Array {
  return internalKey.subarray(0, internalKey.length - INTERNAL_KEY_TRAILER_SIZE);
}
