/**
 * Repair's WAL replay (repair.ts step 2; LevelDB's ConvertLogToTable): one WAL's records, each a
 * write batch, into memtables — one per region, routed as the database routes — written out as
 * new tables whenever they fill and at the end. Damage is skipped, never fatal: a stretch the log
 * reader drops (a bad checksum, a bad length) and a record that is not a well-formed batch are
 * counted, and replay goes on with the next good record, as LevelDB's repairer does; a WAL that
 * cannot be opened, or a read that fails part-way, drops the rest (counted too). A batch is
 * applied whole or not at all. A failure to write a table is thrown: the caller must stop.
 *
 * Sequence numbers are kept as the WAL has them. They ascend within a WAL; a batch whose numbers
 * do not (a copy of an earlier one) starts new memtables, so no memtable holds one (key, sequence)
 * twice — repair's merge drops the copy later.
 */
import { corruption, isSieveError } from '../errors.js';
import { encodeInternalKey, type ValueType } from '../format/internal-key.js';
import type { FileSystem } from '../fs/file-system.js';
import { MemTable } from '../memtable/memtable.js';
import { LogReader } from '../wal/log-reader.js';
import { batchSequence, checkBatch, forEachBatchEntry } from '../wal/write-batch.js';
import { bareMessage } from '../tools/error-text.js';
import type { RepairProblem } from './repair-report.js';
import { type RepairTable, type TableBuildOptions, TableOutput } from './repair-tables.js';

/** Where the replayed writes go. */
export interface WalTarget {
  readonly fs: FileSystem;
  /** The region of a key (0 for a plain database); throws for a router's bad answer. */
  regionOf(key: Uint8Array): number;
  /** The directory of region `region`'s tables. */
  dirOf(region: number): string;
  newNumber(): number;
  readonly build: TableBuildOptions;
  /** Memtable bytes (all regions) that trigger writing tables. */
  readonly writeBufferSize: number;
  /** Told of each table as soon as it is written (so a later failure can remove it). */
  onTable(table: RepairTable): void;
}

export interface WalReplay {
  /** Records replayed, and their entries. */
  readonly records: number;
  readonly entries: number;
  /** Damaged stretches and malformed records skipped, and their bytes (each one in `damage`). */
  readonly dropped: number;
  readonly bytesDropped: number;
  readonly damage: readonly RepairProblem[];
  /** The largest sequence number replayed (0 if none). */
  readonly maxSequence: number;
}

interface RoutedEntry {
  region: number;
  type: ValueType;
  key: Uint8Array;
  value: Uint8Array;
}

/** Replays the WAL at `path` into tables (see the file comment). I/O errors are thrown. */
export function replayWal(path: string, target: WalTarget): WalReplay {
  const damage: RepairProblem[] = [];
  let dropped = 0;
  let bytesDropped = 0;
  let records = 0;
  let entries = 0;
  let maxSequence = 0;
  const mems: (MemTable | undefined)[] = [];
  let memSequence = -1;
  const flush = (): void => {
    mems.forEach((mem, region) => {
      if (mem !== undefined && mem.count > 0) writeTable(mem, region, target);
    });
    mems.length = 0;
    memSequence = -1;
  };
  let file;
  try {
    file = target.fs.openReadable(path);
  } catch (err) {
    if (!isSieveError(err)) throw err;
    const bytes = sizeOf(target.fs, path);
    return { records, entries, dropped: 1, bytesDropped: bytes, damage: [{ file: path, reason: `cannot open the WAL: ${bareMessage(err)}` }], maxSequence };
  }
  try {
    const reader = new LogReader(file, {
      onCorruption: (c) => {
        dropped++;
        bytesDropped += c.bytes;
        damage.push({ file: path, offset: c.offset, reason: `dropped ${c.bytes} bytes: ${c.reason}` });
      },
    });
    const routed: RoutedEntry[] = [];
    // A read that fails (a bad sector) ends the WAL: what follows it is dropped and counted.
    const next = (): Uint8Array | null => {
      try {
        return reader.readRecord();
      } catch (err) {
        if (!isSieveError(err, 'IO_ERROR')) throw err;
        dropped++;
        bytesDropped += Math.max(0, file.size - reader.lastRecordOffset);
        damage.push({ file: path, offset: reader.lastRecordOffset, reason: `read failed; the rest of the WAL is dropped: ${bareMessage(err)}` });
        return null;
      }
    };
    for (let record = next(); record !== null; record = next()) {
      const offset = reader.lastRecordOffset;
      let count: number;
      let seq: number;
      try {
        count = checkBatch(record, path, offset);
        seq = batchSequence(record, path, offset);
        if (!Number.isSafeInteger(seq + count)) throw corruption(`sequence number ${seq} past 2^53`, { file: path, offset });
      } catch (err) {
        if (!isSieveError(err, 'CORRUPTION')) throw err;
        dropped++;
        bytesDropped += record.length;
        damage.push({ file: path, offset, reason: `dropped a malformed record: ${err.message}` });
        continue;
      }
      if (count === 0) continue;
      routed.length = 0;
      forEachBatchEntry(record, (type, key, value) => routed.push({ region: target.regionOf(key), type, key, value }), path, offset);
      if (seq <= memSequence) flush();
      let s = seq;
      for (const e of routed) (mems[e.region] ??= new MemTable({ initialArenaBytes: 1 << 20 })).add(s++, e.type, e.key, e.value);
      memSequence = seq + count - 1;
      if (memSequence > maxSequence) maxSequence = memSequence;
      records++;
      entries += count;
      let memory = 0;
      for (const mem of mems) memory += mem?.approximateMemoryUsage ?? 0;
      if (memory >= target.writeBufferSize) flush();
    }
    flush();
  } finally {
    file.close();
  }
  return { records, entries, dropped, bytesDropped, damage, maxSequence };
}

function sizeOf(fs: FileSystem, path: string): number {
  try {
    return fs.size(path);
  } catch {
    return 0;
  }
}

function writeTable(mem: MemTable, region: number, target: WalTarget): void {
  const out = new TableOutput(target.fs, target.dirOf(region), region, target.newNumber(), target.build);
  try {
    const it = mem.iterator();
    for (it.seekToFirst(); it.valid; it.next()) out.add(encodeInternalKey(it.key, it.seq, it.type as ValueType), it.value);
  } catch (err) {
    out.abandon();
    throw err;
  }
  const table = out.finish();
  if (table !== undefined) target.onTable(table);
}
