/**
 * VersionEdit: one change to the set of table files, as a MANIFEST record (LevelDB's
 * db/version_edit.cc). A record is a sequence of (varint32 tag, fields):
 *
 *   1 comparator name (length-prefixed)     2 log number (varint64)
 *   3 next file number (varint64)           4 last sequence (varint64)
 *   5 compact pointer: varint32 level, length-prefixed internal key
 *   6 deleted file: varint32 level, varint64 file number
 *   7 new file: varint32 level, varint64 number, varint64 size, smallest, largest (internal keys)
 *   9 previous log number (varint64)
 *
 * Regions (sharded databases, DESIGN.md "Shards"): all regions share one MANIFEST. Tag 200
 * (varint32 region) sets the region that the following 5/6/7 fields of the same record belong
 * to, as RocksDB's column-family tag does; every record starts in region 0. A database with one
 * region never writes tag 200, so its MANIFEST is LevelDB's byte for byte and LevelDB reads it.
 *
 * Decoding checks every length against the record and throws CORRUPTION (naming the file and
 * the record's offset) for an unknown tag or a field that runs past the end.
 */
import { TextDecoder, TextEncoder } from 'node:util';
import { corruption } from '../errors.js';
import { ByteReader, MAX_VARINT32_LENGTH, MAX_VARINT64_LENGTH, putVarint32, putVarint64 } from '../format/varint.js';

/** Persisted tags: never renumber. */
export const EditTag = {
  COMPARATOR: 1,
  LOG_NUMBER: 2,
  NEXT_FILE_NUMBER: 3,
  LAST_SEQUENCE: 4,
  COMPACT_POINTER: 5,
  DELETED_FILE: 6,
  NEW_FILE: 7,
  PREV_LOG_NUMBER: 9,
  /** sievekv: the region of the following per-level fields (absent in LevelDB's files). */
  REGION: 200,
} as const;

/** Levels 0..NUM_LEVELS-1, as LevelDB (config::kNumLevels). Persisted in every edit. */
export const NUM_LEVELS = 7;

/** A table file as the MANIFEST describes it. Keys are internal keys (user key + trailer). */
export interface FileMetaData {
  readonly number: number;
  readonly fileSize: number;
  readonly smallest: Uint8Array;
  readonly largest: Uint8Array;
}

export interface NewFile {
  region: number;
  level: number;
  file: FileMetaData;
}

export interface DeletedFile {
  region: number;
  level: number;
  number: number;
}

export interface CompactPointer {
  region: number;
  level: number;
  key: Uint8Array;
}

export class VersionEdit {
  comparator?: string;
  logNumber?: number;
  prevLogNumber?: number;
  nextFileNumber?: number;
  lastSequence?: number;
  readonly compactPointers: CompactPointer[] = [];
  readonly deletedFiles: DeletedFile[] = [];
  readonly newFiles: NewFile[] = [];

  addFile(level: number, file: FileMetaData, region = 0): this {
    this.newFiles.push({ region, level, file });
    return this;
  }

  deleteFile(level: number, number: number, region = 0): this {
    this.deletedFiles.push({ region, level, number });
    return this;
  }

  setCompactPointer(level: number, key: Uint8Array, region = 0): this {
    this.compactPointers.push({ region, level, key });
    return this;
  }

  /** The record's bytes (owned). Fields go out in LevelDB's order, grouped by region. */
  encode(): Uint8Array {
    let size = 0;
    const name = this.comparator === undefined ? undefined : new TextEncoder().encode(this.comparator);
    size += (name?.length ?? 0) + 5 * (MAX_VARINT32_LENGTH + MAX_VARINT64_LENGTH);
    for (const p of this.compactPointers) size += 3 * MAX_VARINT32_LENGTH + p.key.length;
    size += this.deletedFiles.length * (2 * MAX_VARINT32_LENGTH + MAX_VARINT64_LENGTH);
    for (const f of this.newFiles) size += 4 * MAX_VARINT32_LENGTH + 2 * MAX_VARINT64_LENGTH + f.file.smallest.length + f.file.largest.length;
    size += (this.compactPointers.length + this.deletedFiles.length + this.newFiles.length) * 2 * MAX_VARINT32_LENGTH;
    const out = new Uint8Array(size);
    let p = 0;
    const bytes = (b: Uint8Array): void => {
      p = putVarint32(out, p, b.length);
      out.set(b, p);
      p += b.length;
    };
    const number = (tag: number, v: number | undefined): void => {
      if (v === undefined) return;
      p = putVarint32(out, p, tag);
      p = putVarint64(out, p, v);
    };
    if (name !== undefined) {
      p = putVarint32(out, p, EditTag.COMPARATOR);
      bytes(name);
    }
    number(EditTag.LOG_NUMBER, this.logNumber);
    number(EditTag.PREV_LOG_NUMBER, this.prevLogNumber);
    number(EditTag.NEXT_FILE_NUMBER, this.nextFileNumber);
    number(EditTag.LAST_SEQUENCE, this.lastSequence);
    let region = 0;
    const enter = (r: number): void => {
      if (r === region) return;
      region = r;
      p = putVarint32(out, p, EditTag.REGION);
      p = putVarint32(out, p, r);
    };
    for (const r of this.#regions()) {
      for (const c of this.compactPointers) {
        if (c.region !== r) continue;
        enter(r);
        p = putVarint32(out, p, EditTag.COMPACT_POINTER);
        p = putVarint32(out, p, c.level);
        bytes(c.key);
      }
      // LevelDB keeps deletions in a std::set: sorted by (level, number).
      const deleted = this.deletedFiles.filter((d) => d.region === r).sort((a, b) => a.level - b.level || a.number - b.number);
      for (const d of deleted) {
        enter(r);
        p = putVarint32(out, p, EditTag.DELETED_FILE);
        p = putVarint32(out, p, d.level);
        p = putVarint64(out, p, d.number);
      }
      for (const f of this.newFiles) {
        if (f.region !== r) continue;
        enter(r);
        p = putVarint32(out, p, EditTag.NEW_FILE);
        p = putVarint32(out, p, f.level);
        p = putVarint64(out, p, f.file.number);
        p = putVarint64(out, p, f.file.fileSize);
        bytes(f.file.smallest);
        bytes(f.file.largest);
      }
    }
    return out.slice(0, p);
  }

  /** Regions this edit touches, ascending, region 0 first so plain edits need no REGION tag. */
  #regions(): number[] {
    const set = new Set<number>([0]);
    for (const x of [...this.compactPointers, ...this.deletedFiles, ...this.newFiles]) set.add(x.region);
    return [...set].sort((a, b) => a - b);
  }

  /** Decodes a MANIFEST record; CORRUPTION names `file` and the record's `offset`. */
  static decode(record: Uint8Array, file?: string, offset = 0): VersionEdit {
    const edit = new VersionEdit();
    const r = new ByteReader(record, 0, record.length, file, offset);
    const bytes = (what: string): Uint8Array => {
      const n = r.varint32();
      if (n > r.remaining) r.fail(`${what} runs past the record`);
      const out = record.slice(r.pos, r.pos + n);
      r.pos += n;
      return out;
    };
    const level = (): number => {
      const l = r.varint32();
      if (l >= NUM_LEVELS) r.fail(`level ${l} out of range`);
      return l;
    };
    let region = 0;
    while (r.remaining > 0) {
      const tag = r.varint32();
      switch (tag) {
        case EditTag.COMPARATOR:
          edit.comparator = new TextDecoder().decode(bytes('comparator name'));
          break;
        case EditTag.LOG_NUMBER:
          edit.logNumber = r.varint64();
          break;
        case EditTag.PREV_LOG_NUMBER:
          edit.prevLogNumber = r.varint64();
          break;
        case EditTag.NEXT_FILE_NUMBER:
          edit.nextFileNumber = r.varint64();
          break;
        case EditTag.LAST_SEQUENCE:
          edit.lastSequence = r.varint64();
          break;
        case EditTag.COMPACT_POINTER: {
          const l = level();
          edit.compactPointers.push({ region, level: l, key: bytes('compact pointer') });
          break;
        }
        case EditTag.DELETED_FILE: {
          const l = level();
          edit.deletedFiles.push({ region, level: l, number: r.varint64() });
          break;
        }
        case EditTag.NEW_FILE: {
          const l = level();
          const number = r.varint64();
          const fileSize = r.varint64();
          const smallest = bytes('smallest key');
          const largest = bytes('largest key');
          if (smallest.length < 8 || largest.length < 8) r.fail('file key shorter than an internal key');
          edit.newFiles.push({ region, level: l, file: { number, fileSize, smallest, largest } });
          break;
        }
        case EditTag.REGION:
          region = r.varint32();
          break;
        default:
          throw corruption(`unknown VersionEdit tag ${tag}`, { file, offset });
      }
    }
    return edit;
  }
}
