/**
 * The space check of issue 5, shared by bench/compaction.ts and test/db/compaction-space.test.ts.
 *
 * "Live data after compression" is defined as the size of ONE table holding exactly the live
 * entries — one per live user key, with the sequence number and value of its newest write, no
 * deletions — built by TableBuilder with the database's table options (compression, block size,
 * restart interval, filter policy and scope). It is what a perfectly compacted database would
 * store if it were a single file: the data blocks, compressed the same way, plus one index, one
 * filter, one properties block and one footer. A database's SST bytes over it measure garbage
 * (shadowed versions, deletion markers) plus the per-file overhead of splitting the data over
 * many tables.
 */
import type { FileSystem, WritableFile } from '../src/fs/file-system.js';
import { encodeInternalKey, ValueType } from '../src/format/internal-key.js';
import { resolveOptions, type Options } from '../src/options.js';
import { TableBuilder } from '../src/sstable/table-builder.js';
import { TableCache } from '../src/sstable/table-cache.js';
import { NUM_LEVELS } from '../src/version/version-edit.js';
import { VersionSet } from '../src/version/version-set.js';

/** A file that keeps nothing but its length. */
class CountingFile implements WritableFile {
  size = 0;
  append(data: Uint8Array, start = 0, end = data.length): void {
    this.size += end - start;
  }
  sync(): void {}
  async syncAsync(): Promise<void> {}
  close(): void {}
}

/** A live entry: user key, the sequence of its newest write, its value. */
export type LiveEntry = readonly [key: Uint8Array, sequence: number, value: Uint8Array];

/** Bytes of one table of `entries` (sorted by key, one per key) built with `options`' table options. */
export function liveDataSize(entries: Iterable<LiveEntry>, options: Options = {}): number {
  const o = resolveOptions(options);
  const file = new CountingFile();
  const builder = new TableBuilder(file, {
    blockSize: o.blockSize,
    blockRestartInterval: o.blockRestartInterval,
    compression: o.compression,
    ...(o.filterPolicy !== null ? { filterPolicy: o.filterPolicy } : {}),
    filterScope: o.filterScope,
  });
  for (const [key, seq, value] of entries) builder.add(encodeInternalKey(key, seq, ValueType.VALUE), value);
  builder.finish();
  return builder.fileSize;
}

/** Per level of a closed one-region database: files, bytes, and its tables' property counts. */
export interface LevelContents {
  level: number;
  files: number;
  bytes: number;
  entries: number;
  userKeys: number;
  deletions: number;
}

/** Reads the MANIFEST of the closed database in `dir` and each live table's properties. */
export function levelContents(fs: FileSystem, dir: string): LevelContents[] {
  const versions = new VersionSet(dir, fs, 1);
  const tables = new TableCache(fs, dir);
  try {
    versions.recover();
    const out: LevelContents[] = [];
    for (let level = 0; level < NUM_LEVELS; level++) {
      const files = versions.current.files(0, level);
      if (files.length === 0) continue;
      const c: LevelContents = { level, files: files.length, bytes: 0, entries: 0, userKeys: 0, deletions: 0 };
      for (const f of files) {
        c.bytes += f.fileSize;
        const p = tables.findTable(f.number, f.fileSize).properties;
        if (p === undefined) throw new Error(`table ${f.number} has no properties block`);
        c.entries += p.numEntries;
        c.userKeys += p.numUserKeys;
        c.deletions += p.numDeletions;
        tables.evict(f.number);
      }
      out.push(c);
    }
    return out;
  } finally {
    tables.close();
    versions.close();
  }
}
