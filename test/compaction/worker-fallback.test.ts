/**
 * Issue 9, item 12: a background worker that cannot start is reported once and its jobs run on
 * the database's thread instead — slower, but writes go on. Covered: `new Worker` throwing (worker
 * threads refused), a worker failing as it loads, one exiting without a word, and one that never
 * says it is ready (given up at its start-up deadline; a caller blocked in waitSync meanwhile runs
 * the jobs itself). The fallback runs jobs on the file system it was given.
 */
import { Worker, type MessagePort } from 'node:worker_threads';
import { describe, expect, it, vi } from 'vitest';
import type { FlushJob, JobResult, TableShape } from '../../src/compaction/jobs.js';
import { WorkerRunner, type WorkerRunnerOptions } from '../../src/compaction/runner.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { ValueType } from '../../src/format/internal-key.js';
import { MemTable } from '../../src/memtable/memtable.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { TableCache } from '../../src/sstable/table-cache.js';

const shape: TableShape = { blockSize: 1024, blockRestartInterval: 16, compression: CompressionType.NONE, filter: { kind: 'bloom', bitsPerKey: 10, hashCount: 6 }, filterScope: 'block' };

function flushJob(number: number, n = 200): FlushJob {
  const mem = new MemTable();
  for (let i = 0; i < n; i++) mem.add(i + 1, ValueType.VALUE, Buffer.from(`key-${String(i).padStart(4, '0')}`), Buffer.alloc(30, i));
  return { kind: 'flush', dir: '/d', number, entries: mem.exportState(), shape };
}

function run(runner: WorkerRunner, job: FlushJob): Promise<JobResult> {
  return new Promise((resolve, reject) => runner.submit(job, (err, result) => (err !== undefined ? reject(err) : resolve(result!))));
}

function countEntries(fs: MemFileSystem, number: number, size: number): number {
  const cache = new TableCache(fs, '/d');
  const it = cache.newIterator(number, size);
  let n = 0;
  for (it.seekToFirst(); it.valid(); it.next()) n++;
  it.close();
  cache.close();
  return n;
}

/** A worker started from `source` (eval'd), its answer port unused. */
const evalWorker =
  (source: string) =>
  (port: MessagePort): Worker => {
    port.close();
    return new Worker(source, { eval: true, execArgv: [] });
  };

const STARTS: [string, WorkerRunnerOptions['startWorker'], RegExp][] = [
  [
    'new Worker throws (worker threads refused)',
    () => {
      throw Object.assign(new Error('Access to this API has been restricted'), { code: 'ERR_ACCESS_DENIED' });
    },
    /ERR_ACCESS_DENIED: Access to this API has been restricted/,
  ],
  ['the worker fails as it loads', evalWorker('throw new Error("cannot load the worker module")'), /cannot load the worker module/],
  ['the worker exits without a word', evalWorker('process.exit(7)'), /exited with code 7/],
  ['the worker never says it is ready', evalWorker('setInterval(() => {}, 1000)'), /did not answer within 300 ms/],
];

describe('a background worker that cannot start', () => {
  for (const [name, startWorker, reason] of STARTS) {
    it(`${name}: reported once, and every job runs inline`, async () => {
      const fs = new MemFileSystem();
      fs.mkdir('/d');
      const reports: string[] = [];
      // Only the worker that never answers needs the short deadline; the others fail by themselves,
      // and a deadline they could meet first on a slow machine would give another reason.
      const startupLimitMs = reason.source.includes('did not answer') ? 300 : 60_000;
      const runner = new WorkerRunner({ name: 'flush', fs, report: (m) => reports.push(m), startWorker, startupLimitMs });
      const results = await Promise.all([run(runner, flushJob(1)), run(runner, flushJob(2, 50))]);
      const later = await run(runner, flushJob(3, 10));
      expect([...results, later].map((r) => (r.kind === 'flush' ? countEntries(fs, r.file.number, r.file.fileSize) : -1))).toEqual([200, 50, 10]);
      expect(reports).toHaveLength(1);
      expect(reports[0]).toMatch(/^the flush worker thread could not start \(/);
      expect(reports[0]).toMatch(reason);
      expect(reports[0]).toMatch(/flush jobs run on the database's thread from now on$/);
      expect(runner.fallbackReason).toMatch(reason);
      expect(runner.pending).toBe(0);
      await runner.close();
    });
  }

  it('a start-up timer that fires before the deadline by the clock the runner reads still gives the worker up', async () => {
    const fs = new MemFileSystem();
    fs.mkdir('/d');
    const runner = new WorkerRunner({ fs, report: () => {}, startWorker: evalWorker('setInterval(() => {}, 1000)'), startupLimitMs: 300 });
    // Timers run on the event loop's clock, in whole milliseconds; the runner's deadline is read
    // from another clock. Set those clocks 50 ms back once the deadline is set: the timer then
    // fires before the deadline, and the check must look again, not wait for a timer that is gone.
    let lag = 0;
    const performanceNow = performance.now.bind(performance);
    const dateNow = Date.now.bind(Date);
    const clocks = [vi.spyOn(performance, 'now').mockImplementation(() => performanceNow() - lag), vi.spyOn(Date, 'now').mockImplementation(() => dateNow() - lag)];
    try {
      const running = run(runner, flushJob(1, 20));
      lag = 50;
      const result = await running;
      expect(result.kind === 'flush' ? countEntries(fs, result.file.number, result.file.fileSize) : -1).toBe(20);
      expect(runner.fallbackReason).toMatch(/did not answer within 300 ms/);
    } finally {
      for (const clock of clocks) clock.mockRestore();
    }
    await runner.close();
  }, 5_000);

  it('a synchronous caller (waitSync) does not wait for the worker: the jobs run here at once, and the worker is given up at its deadline', async () => {
    const fs = new MemFileSystem();
    fs.mkdir('/d');
    const reports: string[] = [];
    const runner = new WorkerRunner({ fs, report: (m) => reports.push(m), startWorker: evalWorker('setInterval(() => {}, 1000)'), startupLimitMs: 300 });
    const seen: number[] = [];
    for (const number of [1, 2]) runner.submit(flushJob(number), (err, r) => {
      expect(err).toBeUndefined();
      if (r?.kind === 'flush') seen.push(r.file.number);
    });
    runner.waitSync();
    expect(seen).toEqual([1, 2]);
    expect(reports).toEqual([]); // well before the 300 ms deadline
    expect(countEntries(fs, 2, fs.size('/d/000002.ldb'))).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatch(/did not answer within 300 ms/);
    await runner.close();
  });

  it('a worker that starts is used, and nothing is reported', async () => {
    const fs = new MemFileSystem(); // only a fallback would write here
    const reports: string[] = [];
    const runner = new WorkerRunner({ fs, report: (m) => reports.push(m) });
    const err = await run(runner, { ...flushJob(1), dir: '/nonexistent/sievekv-dir' }).catch((e: unknown) => e);
    // The worker wrote (and failed) on the real file system, not on `fs`.
    expect(String((err as Error).message)).toMatch(/ENOENT/);
    expect(reports).toEqual([]);
    expect(runner.fallbackReason).toBeUndefined();
    await runner.close();
  });
});
