/**
 * Jobs as steps (job-steps.ts): a worker runs a flush or a merge with a turn of its event loop
 * every STEP_ENTRIES entries, the database's thread runs it through at once. Both must write the
 * very same tables and answer the same result; the yielding run must actually let the event loop
 * run (that is what frees lz4-napi's compressed blocks as the job goes); a stop flag set between
 * steps still abandons the job and removes its files.
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
import { executeJob, executeJobYielding, type Job, type TableShape } from '../../src/compaction/jobs.js';
import { STEP_ENTRIES } from '../../src/compaction/job-steps.js';
import { newStopFlag, setStopFlag } from '../../src/compaction/stop-flag.js';

const DIR = '/db';
const ENTRIES = 5 * STEP_ENTRIES;
const keyOf = (i: number): Uint8Array => Buffer.from(`key-${String(i).padStart(6, '0')}`);
const valueOf = (i: number): Uint8Array => Buffer.from(`value ${i} `.repeat(4));
const shape: TableShape = {
  blockSize: 1024,
  blockRestartInterval: 16,
  compression: CompressionType.LZ4,
  filter: { kind: 'bloom', bitsPerKey: 10, hashCount: 6 },
  tableFilter: { kind: 'ribbon', bitsPerKey: 10 },
  filterScope: 'both',
};

function inputTable(fs: MemFileSystem, number: number, offset: number): FileMetaData {
  const file = fs.createWritable(tableFileName(DIR, number));
  const b = new TableBuilder(file, { blockSize: 1024, compression: CompressionType.LZ4 });
  for (let i = offset; i < ENTRIES; i += 2) b.add(encodeInternalKey(keyOf(i), number * 100_000 + i + 1, ValueType.VALUE), valueOf(i));
  b.finish();
  file.close();
  return { number, fileSize: b.fileSize, smallest: b.smallestKey!.slice(), largest: b.largestKey!.slice() };
}

/** A file system with two level-0 inputs, and each kind of job over it. */
function setUp(): { fs: MemFileSystem; flush: Job; merge: Job } {
  const fs = new MemFileSystem();
  fs.mkdir(DIR);
  const upper = [inputTable(fs, 2, 0), inputTable(fs, 1, 1)];
  const mem = new MemTable();
  for (let i = 0; i < ENTRIES; i++) mem.add(1_000_000 + i, ValueType.VALUE, keyOf(i), valueOf(i));
  const flush: Job = { kind: 'flush', dir: DIR, number: 5, entries: mem.exportState(), shape };
  const merge: Job = {
    kind: 'compact',
    shape,
    task: levelZeroMerge(DIR, upper, {
      outputNumbers: [10, 11, 12, 13, 14, 15, 16, 17],
      maxFileSize: 64 * 1024,
      blockSize: 1024,
      compression: CompressionType.LZ4,
      filterScope: 'both',
    }),
  };
  return { fs, flush, merge };
}

const tableBytes = (fs: MemFileSystem): Map<string, string> =>
  new Map(
    fs
      .list(DIR)
      .filter((n) => n.endsWith('.ldb') && !['000001.ldb', '000002.ldb'].includes(n))
      .sort()
      .map((n) => [n, Buffer.from(fs.readFile(`${DIR}/${n}`)).toString('hex')]),
  );

describe('jobs run as steps', () => {
  for (const kind of ['flush', 'merge'] as const) {
    it(`a ${kind} run with turns of the event loop writes what the same ${kind} run at once writes`, async () => {
      const atOnce = setUp();
      const stepped = setUp();
      const expected = executeJob(atOnce.fs, atOnce[kind]);
      let turns = 0;
      let counting = true;
      const count = (): void => {
        turns++;
        if (counting) setImmediate(count);
      };
      setImmediate(count);
      const result = await executeJobYielding(stepped.fs, stepped[kind]);
      counting = false;
      expect(result).toEqual(expected);
      expect(tableBytes(stepped.fs)).toEqual(tableBytes(atOnce.fs));
      expect(tableBytes(stepped.fs).size).toBeGreaterThan(0);
      // ENTRIES / STEP_ENTRIES steps, each followed by a turn the counter saw.
      expect(turns).toBeGreaterThanOrEqual(Math.floor(ENTRIES / STEP_ENTRIES) - 1);
    });

    it(`a ${kind} whose stop flag is set between its steps is abandoned and leaves no table`, async () => {
      const { fs, [kind]: job } = setUp();
      const stop = newStopFlag();
      setImmediate(() => setStopFlag(stop));
      expect(await executeJobYielding(fs, job, stop)).toEqual({ kind: 'abandoned' });
      expect(tableBytes(fs).size).toBe(0);
    });
  }
});
