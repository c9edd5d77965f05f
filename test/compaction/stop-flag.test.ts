/**
 * A job that sees its runner's stop flag (stop-flag.ts) stops, removes every file it created and
 * answers 'abandoned' — before it begins, or part-way through a merge or a flush. Both runners
 * answer every job still to run that way once they are closed.
 */
import { describe, expect, it } from 'vitest';
import { levelZeroMerge } from '../support/compaction-task.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { encodeInternalKey, ValueType } from '../../src/format/internal-key.js';
import { MemTable } from '../../src/memtable/memtable.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { TableBuilder } from '../../src/sstable/table-builder.js';
import { tableFileName } from '../../src/version/filenames.js';
import type { FileMetaData } from '../../src/version/version-edit.js';
import { runCompaction, type CompactionTask } from '../../src/compaction/compaction.js';
import { executeJob, flushMemTable, type JobResult, type TableShape } from '../../src/compaction/jobs.js';
import { InlineRunner } from '../../src/compaction/runner.js';
import { isStopped, JobAbandoned, newStopFlag, setStopFlag, STOP_CHECK_INTERVAL } from '../../src/compaction/stop-flag.js';

const DIR = '/db';
const ENTRIES = 3 * STOP_CHECK_INTERVAL; // past several looks at the flag
const keyOf = (i: number): Uint8Array => Buffer.from(`key-${String(i).padStart(6, '0')}`);
const shape: TableShape = { blockSize: 1024, blockRestartInterval: 16, compression: CompressionType.NONE, filter: { kind: 'none' }, filterScope: 'block' };

/** A level-0 table of keys i ≡ `offset` (mod 2) below ENTRIES * 2. */
function inputTable(fs: MemFileSystem, number: number, offset: number): FileMetaData {
  const file = fs.createWritable(tableFileName(DIR, number));
  const b = new TableBuilder(file, { blockSize: 1024, compression: CompressionType.NONE });
  for (let i = offset; i < ENTRIES * 2; i += 2) b.add(encodeInternalKey(keyOf(i), number * 100_000 + i + 1, ValueType.VALUE), new Uint8Array(40).fill(i));
  b.finish();
  file.close();
  return { number, fileSize: b.fileSize, smallest: b.smallestKey!.slice(), largest: b.largestKey!.slice() };
}

function setUp(): { fs: MemFileSystem; task: CompactionTask } {
  const fs = new MemFileSystem();
  fs.mkdir(DIR);
  const upper = [inputTable(fs, 2, 0), inputTable(fs, 1, 1)];
  const task = levelZeroMerge(DIR, upper, {
    outputNumbers: [10, 11, 12, 13, 14, 15, 16, 17],
    maxFileSize: 16 * 1024, // several outputs: the flag is seen after some are finished
    blockSize: 1024,
  });
  return { fs, task };
}

const tables = (fs: MemFileSystem): string[] => fs.list(DIR).filter((n) => n.endsWith('.ldb')).sort();

function memtable(n: number): MemTable {
  const mem = new MemTable();
  for (let i = 0; i < n; i++) mem.add(i + 1, ValueType.VALUE, keyOf(i), new Uint8Array(40).fill(i));
  return mem;
}

describe('the stop flag', () => {
  it('starts clear, and once set stays set', () => {
    const stop = newStopFlag();
    expect(isStopped(stop)).toBe(false);
    expect(isStopped(undefined)).toBe(false);
    setStopFlag(stop);
    expect(isStopped(stop)).toBe(true);
  });

  it('a merge that sees it part-way stops and removes every output, finished ones too', () => {
    const { fs, task } = setUp();
    const stop = newStopFlag();
    // Set while the merge runs, when its second output is created: the first is finished, the
    // second is seen at the next look (some entries on, or before it would be finished).
    const create = fs.createWritable.bind(fs);
    let created = 0;
    fs.createWritable = (path: string) => {
      if (path.endsWith('.ldb') && ++created === 2) setStopFlag(stop);
      return create(path);
    };
    expect(() => runCompaction(fs, task, stop)).toThrow(JobAbandoned);
    expect(created).toBe(2);
    expect(tables(fs)).toEqual(['000001.ldb', '000002.ldb']);
  });

  it('the same merge without it finishes', () => {
    const { fs, task } = setUp();
    const outcome = runCompaction(fs, task, newStopFlag());
    expect(outcome.entriesOut).toBe(ENTRIES * 2);
    expect(outcome.outputs.length).toBeGreaterThan(1);
  });

  it('a flush that sees it part-way stops and removes its table', () => {
    const fs = new MemFileSystem();
    fs.mkdir(DIR);
    const stop = newStopFlag();
    const create = fs.createWritable.bind(fs);
    fs.createWritable = (path: string) => {
      setStopFlag(stop);
      return create(path);
    };
    expect(() => flushMemTable(fs, DIR, 5, memtable(ENTRIES).iterator(), shape, stop)).toThrow(JobAbandoned);
    expect(tables(fs)).toEqual([]);
  });

  it('executeJob answers abandoned, for a job stopped before it begins or part-way', () => {
    const { fs, task } = setUp();
    const stop = newStopFlag();
    setStopFlag(stop);
    const { filterPolicy: _f, tableFilterPolicy: _t, ...compact } = task;
    expect(executeJob(fs, { kind: 'compact', task: compact, shape }, stop)).toEqual({ kind: 'abandoned' });
    expect(executeJob(fs, { kind: 'flush', dir: DIR, number: 5, entries: memtable(ENTRIES), shape }, stop)).toEqual({ kind: 'abandoned' });
    expect(tables(fs)).toEqual(['000001.ldb', '000002.ldb']);
  });

  it('a closed inline runner answers abandoned for every job still queued, in order', async () => {
    const fs = new MemFileSystem();
    fs.mkdir(DIR);
    const runner = new InlineRunner(fs);
    const answers: JobResult['kind'][] = [];
    for (const number of [5, 6]) {
      runner.submit({ kind: 'flush', dir: DIR, number, entries: memtable(10), shape }, (err, result) => {
        expect(err).toBeUndefined();
        answers.push(result!.kind);
      });
    }
    await runner.close();
    expect(answers).toEqual(['abandoned', 'abandoned']);
    expect(tables(fs)).toEqual([]);
  });
});
