/**
 * Where runCompaction cuts its outputs: with too few reserved file numbers (the last output takes
 * the rest instead of failing), and at the grandparent limit (a limit reached while no output is
 * open is forgotten, as LevelDB's ShouldStopBefore, instead of cutting the next output after its
 * first key).
 */
import { describe, expect, it } from 'vitest';
import { levelZeroMerge } from '../support/compaction-task.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { encodeInternalKey, readSequence, ValueType } from '../../src/format/internal-key.js';
import { compareBytes } from '../../src/format/bytes.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { TableBuilder } from '../../src/sstable/table-builder.js';
import { TableCache } from '../../src/sstable/table-cache.js';
import { tableFileName } from '../../src/version/filenames.js';
import type { FileMetaData } from '../../src/version/version-edit.js';
import { runCompaction, type CompactionTask, type FileRange } from '../../src/compaction/compaction.js';

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

function task(upper: FileMetaData[], overrides: Partial<CompactionTask>): CompactionTask {
  return levelZeroMerge(DIR, upper, overrides);
}

const value = (n: number, fill: number): Uint8Array => new Uint8Array(n).fill(fill);
const range = (lo: string, hi: string, fileSize: number): FileRange => ({
  smallest: encodeInternalKey(Buffer.from(lo), 1, ValueType.VALUE),
  largest: encodeInternalKey(Buffer.from(hi), 1, ValueType.VALUE),
  fileSize,
});

describe('runCompaction output cuts', () => {
  it('with fewer reserved numbers than the outputs need, the last output takes the rest', () => {
    const fs = new MemFileSystem();
    fs.mkdir(DIR);
    const entries: Entry[] = [];
    for (let i = 0; i < 40; i++) entries.push({ key: `k${String(i).padStart(3, '0')}`, seq: i + 1, type: ValueType.VALUE, value: value(200, i) });
    const input = writeTable(fs, 10, entries);
    const outcome = runCompaction(fs, task([input], { outputNumbers: [100, 101] }));
    expect(outcome.outputs.map((o) => o.number)).toEqual([100, 101]);
    // The first output was cut at the 1 KiB target (about five 200-byte values); the second holds
    // everything else.
    const perOutput = outcome.outputs.map((o) => userKeys(fs, o));
    expect(perOutput[0]!.length).toBeLessThanOrEqual(6);
    expect(perOutput.flat()).toEqual(entries.map((e) => `${e.key}@${e.seq}`));
    expect(outcome.entriesOut).toBe(40);
  });

  it('forgets a grandparent cut reached while no output is open (dropped entries), as LevelDB', () => {
    const fs = new MemFileSystem();
    fs.mkdir(DIR);
    // `a`, then deletions d00..d29 (dropped: no deeper data), then z0 and z1.
    const entries: Entry[] = [{ key: 'a', seq: 1, type: ValueType.VALUE, value: value(10, 1) }];
    for (let i = 0; i < 30; i++) entries.push({ key: `d${String(i).padStart(2, '0')}`, seq: 10 + i, type: ValueType.DELETION, value: new Uint8Array(0) });
    entries.push({ key: 'z0', seq: 100, type: ValueType.VALUE, value: value(10, 2) }, { key: 'z1', seq: 101, type: ValueType.VALUE, value: value(10, 3) });
    const input = writeTable(fs, 10, entries);
    // One grandparent file per deletion, each a full file's worth: the limit (10 files' worth) is
    // passed twice among the deletions — once with `a`'s output open, once with none open.
    const grandparents = Array.from({ length: 30 }, (_, i) => {
      const k = `d${String(i).padStart(2, '0')}`;
      return range(k, k, 1024);
    });
    const outcome = runCompaction(fs, task([input], { grandparents }));
    expect(outcome.outputs.map((o) => userKeys(fs, o))).toEqual([['a@1'], ['z0@100', 'z1@101']]);
  });
});
