/**
 * Where runCompaction cuts its outputs: with too few reserved file numbers (the last output takes
 * the rest instead of failing).
 */
import { describe, expect, it } from 'vitest';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { encodeInternalKey, readSequence, ValueType } from '../../src/format/internal-key.js';
import { compareBytes } from '../../src/format/bytes.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { TableBuilder } from '../../src/sstable/table-builder.js';
import { TableCache } from '../../src/sstable/table-cache.js';
import { tableFileName } from '../../src/version/filenames.js';
import type { FileMetaData } from '../../src/version/version-edit.js';
import { runCompaction, type CompactionTask } from '../../src/compaction/compaction.js';

const DIR = '/db';

interface Entry {
  key: string;
  seq: number;
  type: ValueType;
  value: Uint8Array;
}

function writeTable(fs: MemFileSystem, number: number, entries: Entry[]): FileMetaData {
  const sorted = [...entries].sort((a, b) => compareBytes(Buffer.from(a.key), Buffer.from(b.key)) || b.seq - a.seq);
  const file = fs.createWritable(tableFileName(DIR, number));
  const b = new TableBuilder(file, { blockSize: 256, compression: CompressionType.NONE });
  for (const e of sorted) b.add(encodeInternalKey(Buffer.from(e.key), e.seq, e.type), e.value);
  b.finish();
  file.close();
  return { number, fileSize: b.fileSize, smallest: b.smallestKey!.slice(), largest: b.largestKey!.slice() };
}

function userKeys(fs: MemFileSystem, meta: FileMetaData): string[] {
  const cache = new TableCache(fs, DIR);
  const it = cache.newIterator(meta.number, meta.fileSize);
  const out: string[] = [];
  for (it.seekToFirst(); it.valid(); it.next()) {
    const k = it.key();
    out.push(`${Buffer.from(k.subarray(0, k.length - 8)).toString()}@${readSequence(k, k.length)}`);
  }
  it.close();
  cache.close();
  return out;
}

function task(fs: MemFileSystem, upper: FileMetaData[], overrides: Partial<CompactionTask>): CompactionTask {
  return {
    dir: DIR,
    outputLevel: 1,
    upper,
    upperIsLevel0: true,
    lower: [],
    grandparents: [],
    deeper: [],
    snapshots: [],
    outputNumbers: [100, 101, 102, 103, 104, 105, 106, 107],
    maxFileSize: 1024,
    blockSize: 256,
    blockRestartInterval: 16,
    compression: CompressionType.NONE,
    filterPolicy: null,
    filterScope: 'block',
    verifyChecksums: true,
    ...overrides,
  };
}

const value = (n: number, fill: number): Uint8Array => new Uint8Array(n).fill(fill);

describe('runCompaction output cuts', () => {
  it('with fewer reserved numbers than the outputs need, the last output takes the rest', () => {
    const fs = new MemFileSystem();
    fs.mkdir(DIR);
    const entries: Entry[] = [];
    for (let i = 0; i < 40; i++) entries.push({ key: `k${String(i).padStart(3, '0')}`, seq: i + 1, type: ValueType.VALUE, value: value(200, i) });
    const input = writeTable(fs, 10, entries);
    const outcome = runCompaction(fs, task(fs, [input], { outputNumbers: [100, 101] }));
    expect(outcome.outputs.map((o) => o.number)).toEqual([100, 101]);
    // The first output was cut at the 1 KiB target (about five 200-byte values); the second holds
    // everything else.
    const perOutput = outcome.outputs.map((o) => userKeys(fs, o));
    expect(perOutput[0]!.length).toBeLessThanOrEqual(6);
    expect(perOutput.flat()).toEqual(entries.map((e) => `${e.key}@${e.seq}`));
    expect(outcome.entriesOut).toBe(40);
  });
});
