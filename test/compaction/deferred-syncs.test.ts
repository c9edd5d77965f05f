/**
 * A merge run yielding (on a worker; MergeRun 'yielding') syncs each finished output table in the
 * background while it writes the next (MergeOutputs). It must give the same tables as a merge that
 * syncs each one in turn, answer only once every fdatasync has returned, and fail — its outputs removed —
 * when one of them fails. A merge a closing database stops on a worker unlinks its outputs while
 * it holds each open, and lets go of them only after it has answered (on ext4 the blocks of a
 * synced table are freed at its last close, milliseconds each).
 */
import { describe, expect, it } from 'vitest';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { FaultyFileSystem } from '../../src/fs/faulty-fs.js';
import type { FileSystem, RandomAccessFile, WritableFile } from '../../src/fs/file-system.js';
import { encodeInternalKey, ValueType } from '../../src/format/internal-key.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { TableBuilder } from '../../src/sstable/table-builder.js';
import { tableFileName } from '../../src/version/filenames.js';
import type { FileMetaData } from '../../src/version/version-edit.js';
import { compactionSteps, runCompaction, type CompactionTask } from '../../src/compaction/compaction.js';
import { runSteps, runStepsYielding } from '../../src/compaction/job-steps.js';
import { JobAbandoned, newStopFlag, setStopFlag } from '../../src/compaction/stop-flag.js';

const DIR = '/db';

/** 100 bytes that barely compress, different for every `n`. */
function value(n: number): Uint8Array {
  const v = new Uint8Array(100);
  let x = n * 2654435761 + 1;
  for (let i = 0; i < v.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    v[i] = x & 0xff;
  }
  return v;
}

function writeTable(fs: FileSystem, number: number, first: number, count: number, seq: number): FileMetaData {
  const file = fs.createWritable(tableFileName(DIR, number));
  const b = new TableBuilder(file, { blockSize: 512, compression: CompressionType.LZ4 });
  for (let i = first; i < first + count; i++) b.add(encodeInternalKey(Buffer.from(`key${String(i).padStart(6, '0')}`), seq + i, ValueType.VALUE), value(i + seq));
  b.finish();
  file.close();
  return { number, fileSize: b.fileSize, smallest: b.smallestKey!.slice(), largest: b.largestKey!.slice() };
}

/** Two overlapping level-0 tables of 3,000 entries each, merged into outputs of at most 64 KiB. */
function setUp(fs: FileSystem): CompactionTask {
  fs.mkdir(DIR);
  const a = writeTable(fs, 1, 0, 3000, 1);
  const b = writeTable(fs, 2, 1500, 3000, 10_000);
  return {
    dir: DIR, outputLevel: 1, upper: [b, a], upperIsLevel0: true, lower: [], grandparents: [], deeper: [], snapshots: [],
    outputNumbers: Array.from({ length: 40 }, (_, i) => 100 + i), maxFileSize: 64 * 1024, blockSize: 1024, blockRestartInterval: 16,
    compression: CompressionType.LZ4, filterPolicy: null, filterScope: 'block', verifyChecksums: true,
  };
}

/** Counts syncs started and finished; a sync takes a turn of the event loop to return. */
class SlowSyncs extends MemFileSystem {
  started = 0;
  finished = 0;
  override createWritable(path: string): WritableFile {
    const file = super.createWritable(path);
    const self = this;
    return Object.assign(Object.create(file) as WritableFile, {
      syncAsync(): Promise<void> {
        self.started++;
        return new Promise<void>((resolve) => setImmediate(resolve)).then(() => file.syncAsync()).then(() => void self.finished++);
      },
    });
  }
}

/**
 * Records, in order, what happens to every table file: `create`, `sync` (a background fdatasync
 * begins; it returns a turn of the event loop later: `synced`), `close`, `open` (opened for
 * reading), `release` (that handle closed) and `remove`.
 */
class FileEvents extends MemFileSystem {
  readonly events: string[] = [];
  override createWritable(path: string): WritableFile {
    const file = super.createWritable(path);
    const events = this.events;
    events.push(`create ${path}`);
    return Object.assign(Object.create(file) as WritableFile, {
      syncAsync(): Promise<void> {
        events.push(`sync ${path}`);
        return new Promise<void>((resolve) => setImmediate(resolve))
          .then(() => file.syncAsync())
          .then(() => void events.push(`synced ${path}`));
      },
      close(): void {
        events.push(`close ${path}`);
        file.close();
      },
    });
  }
  override openReadable(path: string): RandomAccessFile {
    const file = super.openReadable(path);
    const events = this.events;
    events.push(`open ${path}`);
    return Object.assign(Object.create(file) as RandomAccessFile, {
      close(): void {
        events.push(`release ${path}`);
        file.close();
      },
    });
  }
  override remove(path: string): void {
    this.events.push(`remove ${path}`);
    super.remove(path);
  }
  of(kind: string): string[] {
    return this.events.filter((e) => e.startsWith(`${kind} `)).map((e) => e.slice(kind.length + 1));
  }
  at(kind: string, path: string): number {
    return this.events.indexOf(`${kind} ${path}`);
  }
}

const isOutput = (path: string): boolean => Number(path.slice(DIR.length + 1, -4)) >= 100;

describe('a merge that syncs its outputs in the background', () => {
  it('writes the tables a merge syncing each in turn writes, and answers after every sync returned', async () => {
    const plain = new MemFileSystem();
    const expected = runCompaction(plain, setUp(plain));
    const fs = new SlowSyncs();
    const outcome = await runStepsYielding(compactionSteps(fs, setUp(fs), undefined, 'yielding'));
    expect(outcome.outputs.length).toBeGreaterThan(3);
    expect(fs.started).toBe(outcome.outputs.length);
    expect(fs.finished).toBe(outcome.outputs.length);
    expect(outcome.outputs).toEqual(expected.outputs);
    for (const o of outcome.outputs) expect(fs.readFile(tableFileName(DIR, o.number))).toEqual(plain.readFile(tableFileName(DIR, o.number)));
  });

  it('fails, with its outputs removed, when a background fdatasync fails; the others end first', async () => {
    const inner = new SlowSyncs();
    const fs = new FaultyFileSystem(inner);
    const task = setUp(fs);
    fs.inject({ ops: ['syncAsync'], after: 2 });
    await expect(runStepsYielding(compactionSteps(fs, task, undefined, 'yielding'))).rejects.toThrow(/sync failed: EIO/);
    expect(inner.started).toBeGreaterThanOrEqual(2);
    expect(inner.finished).toBe(inner.started);
    expect(fs.list(DIR).sort()).toEqual(['000001.ldb', '000002.ldb']);
  });

  it('run synchronously, a merge never defers (a step that yields a promise is refused)', () => {
    const fs = new MemFileSystem();
    const task = setUp(fs);
    expect(runCompaction(fs, task).outputs.length).toBeGreaterThan(3);
  });

  it('closes every output once, after its fdatasync', async () => {
    const fs = new FileEvents();
    const task = setUp(fs);
    const outcome = await runStepsYielding(compactionSteps(fs, task, undefined, 'yielding'));
    const outputs = fs.of('create').filter(isOutput);
    expect(outputs.length).toBe(outcome.outputs.length);
    expect(fs.of('close').filter(isOutput).sort()).toEqual([...outputs].sort());
    for (const path of outputs) expect(fs.at('synced', path)).toBeLessThan(fs.at('close', path));
    expect(fs.of('remove')).toEqual([]);
  });

  it('stopped on a worker: no descriptor closed under its fdatasync; every output unlinked while open, answered, then released', async () => {
    const fs = new FileEvents();
    const task = setUp(fs);
    const stop = newStopFlag();
    let steps = 0;
    const between = async (): Promise<void> => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (++steps === 2) setStopFlag(stop);
    };
    await expect(runStepsYielding(compactionSteps(fs, task, stop, 'yielding'), between)).rejects.toBeInstanceOf(JobAbandoned);
    const created = fs.of('create').filter(isOutput);
    const finished = fs.of('sync').filter(isOutput);
    expect(finished.length).toBeGreaterThan(1); // finished (synced) outputs, besides the open one
    expect(fs.of('remove').sort()).toEqual([...created].sort());
    expect(fs.list(DIR).sort()).toEqual(['000001.ldb', '000002.ldb']);
    for (const path of finished) {
      expect(fs.at('synced', path)).toBeGreaterThan(-1);
      expect(fs.at('synced', path)).toBeLessThan(fs.at('close', path));
      expect(fs.at('open', path)).toBeGreaterThan(fs.at('close', path)); // held again for its unlink
      expect(fs.at('open', path)).toBeLessThan(fs.at('remove', path));
    }
    expect(fs.of('release').filter(isOutput)).toEqual([]); // the answer came first
    const stillOpen = created.filter((path) => fs.at('close', path) === -1);
    expect(stillOpen.length).toBe(1); // the table being written
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(fs.of('release').filter(isOutput).sort()).toEqual([...finished].sort());
    expect(fs.at('close', stillOpen[0]!)).toBeGreaterThan(fs.at('remove', stillOpen[0]!));
  });

  it('stopped on the database\'s thread, removes and closes every output before it answers', () => {
    const fs = new FileEvents();
    const task = setUp(fs);
    const stop = newStopFlag();
    const steps = compactionSteps(fs, task, stop);
    steps.next();
    setStopFlag(stop);
    expect(() => runSteps(steps)).toThrow(JobAbandoned);
    const created = fs.of('create').filter(isOutput);
    expect(created.length).toBeGreaterThan(0);
    expect(fs.of('close').filter(isOutput).sort()).toEqual([...created].sort());
    expect(fs.of('remove').sort()).toEqual([...created].sort());
    expect(fs.of('open').filter(isOutput)).toEqual([]);
  });
});
