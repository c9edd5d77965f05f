import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';
import { ValueType } from '../../src/format/internal-key.js';
import { ArenaPool } from '../../src/memtable/arena-pool.js';
import { Lookup, MemTable } from '../../src/memtable/memtable.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { TableCache } from '../../src/sstable/table-cache.js';
import type { CompactJob, Job, JobResult, TableShape } from '../../src/compaction/jobs.js';
import { levelZeroMerge } from '../support/compaction-task.js';
import type { Worker } from 'node:worker_threads';
import { InlineRunner, startJobWorker, WorkerRunner, type JobRunner } from '../../src/compaction/runner.js';

const dirs: string[] = [];
/**
 * The tests that expect a closed runner's worker to end by itself (exit code 0) give it this long
 * before it is terminated: a worker started from TypeScript sources takes about a second to be
 * ready on a loaded machine, and it reads the shutdown message only then.
 */
const ENDS_BY_ITSELF_MS = 60_000;

/** A fresh directory, removed after the file's tests. */
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sievekv-runner-'));
  dirs.push(dir);
  return dir;
}

/**
 * A worker runner whose jobs run on this thread write to `local` (an in-memory file system holding
 * `dir`), and the worker's to the real `dir`: where a table lands says which thread wrote it.
 */
function runnerWritingHere(dir: string): { runner: WorkerRunner; local: MemFileSystem } {
  const local = new MemFileSystem();
  local.mkdir(dir);
  return { runner: new WorkerRunner({ fs: local }), local };
}

/** Submits a flush of `entries` entries to table `number` for each number, pushing each table's number to `seen` as it is done. */
function submitFlushes(runner: JobRunner, dir: string, numbers: readonly number[], entries: number, seen: number[]): void {
  for (const number of numbers) runner.submit({ kind: 'flush', dir, number, entries: memtable(entries).exportState(), shape }, (err, r) => {
    expect(err).toBeUndefined();
    if (r?.kind === 'flush') seen.push(r.file.number);
  });
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const shape: TableShape = { blockSize: 1024, blockRestartInterval: 16, compression: CompressionType.LZ4, filter: { kind: 'bloom', bitsPerKey: 10, hashCount: 6 }, filterScope: 'block' };

function memtable(n: number): MemTable {
  const mem = new MemTable();
  for (let i = 0; i < n; i++) mem.add(i + 1, i % 7 === 0 ? ValueType.DELETION : ValueType.VALUE, Buffer.from(`key-${String(i % 500).padStart(4, '0')}`), Buffer.alloc(40, i & 0xff));
  return mem;
}

function run(runner: JobRunner, job: Job): Promise<JobResult> {
  return new Promise((resolve, reject) => runner.submit(job, (err, result) => (err ? reject(err) : resolve(result!))));
}

function countEntries(fs: NodeFileSystem | MemFileSystem, dir: string, number: number, size: number): number {
  const cache = new TableCache(fs, dir);
  const it = cache.newIterator(number, size);
  let n = 0;
  for (it.seekToFirst(); it.valid(); it.next()) n++;
  it.close();
  cache.close();
  return n;
}

describe('background runners', () => {
  it('a worker runs a flush that arrives during a merge first: the merge waits at its next step', async () => {
    const dir = tempDir();
    const runner = new WorkerRunner();
    // Four level-0 tables of 30,000 entries: a merge of many steps.
    const upper = [];
    for (let t = 0; t < 4; t++) {
      const mem = new MemTable();
      for (let i = 0; i < 30_000; i++) mem.add(t * 30_000 + i + 1, ValueType.VALUE, Buffer.from(`key-${String(i * 4 + t).padStart(7, '0')}`), Buffer.alloc(60, i & 0xff));
      const result = await run(runner, { kind: 'flush', dir, number: 10 + t, entries: mem.exportState(), shape });
      if (result.kind !== 'flush') throw new Error('flush failed');
      upper.unshift(result.file);
    }
    const { filterPolicy: _f, ...task } = levelZeroMerge(dir, upper, {
      maxFileSize: 2 * 1024 * 1024,
      outputNumbers: Array.from({ length: 50 }, (_, i) => 100 + i),
    });
    const merge: CompactJob = { kind: 'compact', task, shape };
    const order: string[] = [];
    const merged = run(runner, merge).then((r) => order.push(r.kind));
    const flushed = run(runner, { kind: 'flush', dir, number: 20, entries: memtable(2000).exportState(), shape }).then((r) => order.push(r.kind));
    await Promise.all([merged, flushed]);
    expect(order).toEqual(['flush', 'compact']);
    await runner.close();
  });

  it('a worker flushes a memtable in a shared arena in place: no copy, nothing moved, and the table is whole', async () => {
    const dir = tempDir();
    const runner = new WorkerRunner();
    const pool = new ArenaPool(256 * 1024);
    const mem = new MemTable({ pool });
    for (let i = 0; i < 2000; i++) mem.add(i + 1, ValueType.VALUE, Buffer.from(`key-${String(i).padStart(5, '0')}`), Buffer.alloc(40, i & 0xff));
    const state = mem.exportState();
    expect(state.buffer).toBeInstanceOf(SharedArrayBuffer);
    const before = Buffer.from(new Uint8Array(state.buffer, 0, state.words * 4));
    const result = await run(runner, { kind: 'flush', dir, number: 8, entries: state, shape });
    if (result.kind !== 'flush') throw new Error('flush failed');
    expect(countEntries(new NodeFileSystem(), dir, 8, result.file.fileSize)).toBe(2000);
    // Still this thread's memtable, unchanged: shared, not transferred (a transfer would detach it).
    expect(state.buffer.byteLength).toBe(256 * 1024);
    expect(Buffer.from(new Uint8Array(state.buffer, 0, state.words * 4)).equals(before)).toBe(true);
    expect(mem.get(Buffer.from('key-01234'), 5000)).toBe(Lookup.FOUND);
    await runner.close();
  });

  it('a memtable in a plain buffer is flushed from a copy, moved to the worker', async () => {
    const dir = tempDir();
    const runner = new WorkerRunner();
    const mem = memtable(2000);
    const state = mem.exportState();
    expect(state.buffer).toBeInstanceOf(ArrayBuffer);
    const result = await run(runner, { kind: 'flush', dir, number: 9, entries: state, shape });
    if (result.kind !== 'flush') throw new Error('flush failed');
    expect(countEntries(new NodeFileSystem(), dir, 9, result.file.fileSize)).toBe(2000);
    expect(state.buffer.byteLength).toBe(0); // the copy went to the worker
    expect(mem.count).toBe(2000); // the memtable keeps its own buffer
    await runner.close();
  });

  it('a worker flushes an exported memtable into a table holding every entry', async () => {
    const dir = tempDir();
    const runner = new WorkerRunner();
    const mem = memtable(2000);
    const result = await run(runner, { kind: 'flush', dir, number: 7, entries: mem.exportState(), shape });
    expect(result.kind).toBe('flush');
    if (result.kind !== 'flush') return;
    expect(result.file.number).toBe(7);
    expect(countEntries(new NodeFileSystem(), dir, 7, result.file.fileSize)).toBe(2000);
    await runner.close();
  });

  it('a closed runner\'s worker ends by itself once idle (exit code 0: not terminated)', async () => {
    const dir = tempDir();
    let worker: Worker | undefined;
    const runner = new WorkerRunner({ startWorker: (port) => (worker = startJobWorker(port)), shutdownLimitMs: ENDS_BY_ITSELF_MS });
    await run(runner, { kind: 'flush', dir, number: 7, entries: memtable(200).exportState(), shape });
    const exited = new Promise<number>((resolve) => worker!.once('exit', resolve));
    await runner.close();
    expect(await exited).toBe(0);
  });

  it('prestart starts the worker once, without a job; a job submitted while it starts waits for it and runs there; after close it starts none', async () => {
    const dir = tempDir();
    const workers: Worker[] = [];
    const runner = new WorkerRunner({ startWorker: (port) => workers[workers.push(startJobWorker(port)) - 1]!, shutdownLimitMs: ENDS_BY_ITSELF_MS });
    runner.prestart();
    runner.prestart();
    expect(workers).toHaveLength(1);
    expect(runner.pending).toBe(0);
    // Submitted at once: the worker has not said it is ready, so the job is held, then posted.
    const result = await run(runner, { kind: 'flush', dir, number: 3, entries: memtable(300).exportState(), shape });
    expect(result.kind).toBe('flush');
    if (result.kind === 'flush') expect(countEntries(new NodeFileSystem(), dir, 3, result.file.fileSize)).toBe(300);
    expect(workers).toHaveLength(1); // the job ran on the worker prestart started
    const exited = new Promise<number>((resolve) => workers[0]!.once('exit', resolve));
    await runner.close();
    expect(await exited).toBe(0);
    runner.prestart();
    expect(workers).toHaveLength(1);
  });

  it('a runner closed while the worker prestart began is still starting: the worker ends by itself', async () => {
    const workers: Worker[] = [];
    const runner = new WorkerRunner({ startWorker: (port) => workers[workers.push(startJobWorker(port)) - 1]!, shutdownLimitMs: ENDS_BY_ITSELF_MS });
    runner.prestart();
    const exited = new Promise<number>((resolve) => workers[0]!.once('exit', resolve));
    await runner.close(); // at once: the worker has not said it is ready
    expect(await exited).toBe(0);
  });

  it('a worker error comes back as the same typed error', async () => {
    const runner = new WorkerRunner();
    const err = await run(runner, { kind: 'flush', dir: '/nonexistent/dir', number: 1, entries: memtable(3).exportState(), shape }).catch((e) => e);
    expect(isSieveError(err, 'IO_ERROR')).toBe(true);
    expect(String(err.message)).toMatch(/ENOENT/);
    await runner.close();
  });

  it('expedite runs the jobs held for a worker still starting here, before it returns, on the runner\'s file system; later jobs go to the worker', async () => {
    const dir = tempDir();
    const { runner, local } = runnerWritingHere(dir);
    const seen: number[] = [];
    submitFlushes(runner, dir, [1, 2], 300, seen);
    expect(seen).toEqual([]);
    runner.expedite();
    expect(seen).toEqual([1, 2]);
    expect(runner.pending).toBe(0);
    expect(countEntries(local, dir, 2, local.size(join(dir, '000002.ldb')))).toBe(300);
    const real = new NodeFileSystem();
    expect(real.exists(join(dir, '000002.ldb'))).toBe(false);
    // The worker was not given up: the next job waits for it and runs there.
    const result = await run(runner, { kind: 'flush', dir, number: 3, entries: memtable(300).exportState(), shape });
    expect(result.kind === 'flush' && countEntries(real, dir, 3, result.file.fileSize)).toBe(300);
    expect(local.exists(join(dir, '000003.ldb'))).toBe(false);
    runner.expedite(); // nothing held: nothing to do
    await runner.close();
  });

  it('a thread that never yields still finds the worker ready: expedite then posts the held flush instead of running it', async () => {
    const dir = tempDir();
    const { runner, local } = runnerWritingHere(dir);
    const sleep = new Int32Array(new SharedArrayBuffer(4));
    // Flush after flush, each expedited at once, with no turn of the event loop in between: the
    // first ones run here while the worker starts; once it is ready one must go to it.
    let number = 1;
    let ranHere = true;
    let posted: Promise<JobResult> | undefined;
    for (const limit = Date.now() + 60_000; ranHere && Date.now() < limit; number++) {
      let answered = false;
      posted = run(runner, { kind: 'flush', dir, number, entries: memtable(50).exportState(), shape }).finally(() => (answered = true));
      runner.expedite();
      await Promise.resolve(); // the done above resolved `posted` synchronously if the job ran here
      ranHere = local.exists(join(dir, `${String(number).padStart(6, '0')}.ldb`));
      if (ranHere) Atomics.wait(sleep, 0, 0, 20);
      else expect(answered).toBe(false);
    }
    expect(ranHere).toBe(false);
    const result = await posted!;
    expect(result.kind === 'flush' && countEntries(new NodeFileSystem(), dir, number - 1, result.file.fileSize)).toBe(50);
    await runner.close();
  });

  it('waitSync delivers worker results synchronously', async () => {
    const dir = tempDir();
    const runner = new WorkerRunner();
    // Once the worker is ready (before, waitSync would run the jobs here).
    await run(runner, { kind: 'flush', dir, number: 9, entries: memtable(10).exportState(), shape });
    const seen: number[] = [];
    submitFlushes(runner, dir, [1, 2, 3], 500, seen);
    runner.waitSync();
    expect(seen).toEqual([1, 2, 3]);
    await runner.close();
  });

  it('the inline runner defers, keeps order, and can be drained synchronously', async () => {
    const fs = new MemFileSystem();
    fs.mkdir('/d');
    const runner = new InlineRunner(fs);
    const seen: number[] = [];
    for (const number of [4, 5]) runner.submit({ kind: 'flush', dir: '/d', number, entries: memtable(100), shape }, (_e, r) => r?.kind === 'flush' && seen.push(r.file.number));
    expect(seen).toEqual([]); // never synchronously inside submit
    runner.waitSync();
    expect(seen).toEqual([4, 5]);
    runner.submit({ kind: 'flush', dir: '/d', number: 6, entries: memtable(10), shape }, (_e, r) => r?.kind === 'flush' && seen.push(r.file.number));
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual([4, 5, 6]);
    expect(countEntries(fs, '/d', 6, fs.size('/d/000006.ldb'))).toBe(10);
  });

  // A sync writer at the level-0 stop waits for the running merge; the merge's install starts the
  // next one on the same runner. Without `until` the wait went on through that one too (and the
  // next): the writer sat out a chain of merges with level 0 long below the stop.
  for (const kind of ['worker', 'inline'] as const) {
    it(`waitSync(until) returns once until() holds, though a job submitted by a done is still pending (${kind})`, async () => {
      const dir = tempDir();
      const fs = new NodeFileSystem();
      const runner: JobRunner = kind === 'worker' ? new WorkerRunner() : new InlineRunner(fs);
      // A worker that is ready (before, waitSync would run the jobs here).
      await run(runner, { kind: 'flush', dir, number: 9, entries: kind === 'worker' ? memtable(10).exportState() : memtable(10), shape });
      const seen: number[] = [];
      const flush = (number: number, then?: () => void): void =>
        runner.submit({ kind: 'flush', dir, number, entries: kind === 'worker' ? memtable(300).exportState() : memtable(300), shape }, (err, r) => {
          expect(err).toBeUndefined();
          if (r?.kind === 'flush') seen.push(r.file.number);
          then?.();
        });
      flush(1, () => flush(2, () => flush(3)));
      runner.waitSync(() => seen.includes(1));
      expect(seen).toEqual([1]);
      expect(runner.pending).toBe(1); // table 2's job, submitted by table 1's done
      runner.waitSync();
      expect(seen).toEqual([1, 2, 3]); // without until: through every job, those submitted meanwhile too
      await runner.close();
    });
  }
});
