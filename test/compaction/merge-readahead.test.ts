/**
 * A merge reads its inputs ahead in windows of at most MERGE_MAX_WINDOW (readahead.ts): it holds
 * one window per input, and a level-0 merge has tens of inputs. So do repair's merges. A scan of
 * the same table by a reader still grows its window to MAX_WINDOW.
 */
import { describe, expect, it } from 'vitest';
import { runCompaction } from '../../src/compaction/compaction.js';
import { mergeGroup } from '../../src/db/repair-merge.js';
import { encodeInternalKey, ValueType } from '../../src/format/internal-key.js';
import type { FileSystem, RandomAccessFile } from '../../src/fs/file-system.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { FIRST_WINDOW, MAX_WINDOW, MERGE_MAX_WINDOW } from '../../src/sstable/readahead.js';
import { TableBuilder } from '../../src/sstable/table-builder.js';
import { TableCache } from '../../src/sstable/table-cache.js';
import { tableFileName } from '../../src/version/filenames.js';
import type { FileMetaData } from '../../src/version/version-edit.js';
import { levelZeroMerge } from '../support/compaction-task.js';

const DIR = '/db';

/** Table `number`: keys `prefix` + 0 … n−1, 100-byte values, 4 KiB uncompressed blocks. */
function writeTable(fs: FileSystem, number: number, prefix: string, n: number, seq: number): FileMetaData {
  const file = fs.createWritable(tableFileName(DIR, number));
  const b = new TableBuilder(file, { blockSize: 4096, compression: CompressionType.NONE });
  const value = new Uint8Array(100).fill(number);
  for (let i = 0; i < n; i++) b.add(encodeInternalKey(Buffer.from(`${prefix}${String(i).padStart(8, '0')}`), seq, ValueType.VALUE), value);
  b.finish();
  file.close();
  return { number, fileSize: b.fileSize, smallest: b.smallestKey!.slice(), largest: b.largestKey!.slice() };
}

/** `inner`, recording the largest read of each table file (by number). */
function recordingReads(inner: MemFileSystem): { fs: FileSystem; largest: Map<string, number> } {
  const largest = new Map<string, number>();
  const fs = new Proxy(inner, {
    get(target, prop) {
      if (prop !== 'openReadable') {
        const v = Reflect.get(target, prop) as unknown;
        return typeof v === 'function' ? (v as (...args: unknown[]) => unknown).bind(target) : v; // private fields need the real receiver
      }
      return (path: string): RandomAccessFile => {
        const file = target.openReadable(path);
        return {
          size: file.size,
          readAt: (buf, bufOffset, length, position) => {
            largest.set(path, Math.max(largest.get(path) ?? 0, length));
            return file.readAt(buf, bufOffset, length, position);
          },
          close: () => file.close(),
        };
      };
    },
  });
  return { fs, largest };
}

describe('a merge reads its inputs ahead in small windows', () => {
  it('no read of an input is larger than MERGE_MAX_WINDOW; a reader scanning the table reads MAX_WINDOW', () => {
    const mem = new MemFileSystem();
    mem.mkdir(DIR);
    // Two overlapping level-0 tables of ~1.2 MiB each: long enough for windows to reach any cap.
    const a = writeTable(mem, 10, 'k', 10000, 1);
    const b = writeTable(mem, 11, 'k', 10000, 2);
    expect(a.fileSize).toBeGreaterThan(4 * MAX_WINDOW);
    const { fs, largest } = recordingReads(mem);
    // Level-0 inputs (a table iterator each), then a level-1 table into level 2 over a level-2
    // one (level iterators).
    const merges = [
      levelZeroMerge(DIR, [b, a], { maxFileSize: 1 << 30, outputNumbers: [100] }),
      levelZeroMerge(DIR, [b], { upperIsLevel0: false, lower: [a], outputLevel: 2, maxFileSize: 1 << 30, outputNumbers: [101] }),
    ];
    for (const task of merges) {
      largest.clear();
      expect(runCompaction(fs, task).outputs).toHaveLength(1);
      for (const input of [a, b]) {
        const read = largest.get(tableFileName(DIR, input.number))!;
        expect(read).toBeGreaterThan(FIRST_WINDOW); // windows grew …
        expect(read).toBeLessThanOrEqual(MERGE_MAX_WINDOW); // … up to the merge's cap
      }
    }

    // Repair's merge of overlapping tables reads its runs the same way.
    largest.clear();
    let next = 200;
    const group = [a, b].map((meta) => ({ region: 0, dir: DIR, meta, entries: 10000, maxSequence: meta.number === a.number ? 1 : 2, created: false }));
    mergeGroup(fs, DIR, 0, group, () => next++, { blockSize: 4096, blockRestartInterval: 16, compression: CompressionType.NONE, filterPolicy: null, tableFilterPolicy: null, filterScope: 'block' }, 1 << 30);
    for (const input of [a, b]) expect(largest.get(tableFileName(DIR, input.number))).toBe(MERGE_MAX_WINDOW);

    largest.clear();
    const cache = new TableCache(fs, DIR);
    const it = cache.newIterator(a.number, a.fileSize);
    let n = 0;
    for (it.seekToFirst(); it.valid(); it.next()) n++;
    it.close();
    cache.close();
    expect(n).toBe(10000);
    expect(largest.get(tableFileName(DIR, a.number))).toBe(MAX_WINDOW);
  });
});
