/**
 * Issue 9, item 13: an error raised on the worker thread came back without its `cause`, so a
 * latched ENOSPC or EIO could not be told apart by a program (`err.cause.code`). Now the error and
 * its causes cross the thread whole: a SieveError's code, file and offset; a system error's
 * `code`, `syscall`, `errno`, `path` (and `dest`), and message. A real job fails here on real
 * files — its output path is a directory, so creating it fails with EISDIR — through the worker,
 * inline for comparison, and through a database whose latched error must carry the cause.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { deserializeError, serializeError } from '../../src/compaction/job-errors.js';
import type { FlushJob, JobResult, TableShape } from '../../src/compaction/jobs.js';
import { InlineRunner, WorkerRunner, type JobRunner } from '../../src/compaction/runner.js';
import { DB } from '../../src/db.js';
import { corruption, isSieveError, SieveError } from '../../src/errors.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';
import { ValueType } from '../../src/format/internal-key.js';
import { MemTable } from '../../src/memtable/memtable.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { tableFileName } from '../../src/version/filenames.js';

const shape: TableShape = { blockSize: 1024, blockRestartInterval: 16, compression: CompressionType.NONE, filter: { kind: 'bloom', bitsPerKey: 10, hashCount: 6 }, filterScope: 'block' };

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sievekv-worker-errors-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function flushJob(dir: string, number: number): FlushJob {
  const mem = new MemTable();
  for (let i = 0; i < 20; i++) mem.add(i + 1, ValueType.VALUE, Buffer.from(`key-${i}`), Buffer.from(`value-${i}`));
  return { kind: 'flush', dir, number, entries: mem.exportState(), shape };
}

function failure(runner: JobRunner, job: FlushJob): Promise<unknown> {
  return new Promise<JobResult | undefined>((resolve, reject) => runner.submit(job, (err, result) => (err !== undefined ? reject(err) : resolve(result)))).then(
    () => {
      throw new Error('expected the job to fail');
    },
    (err: unknown) => err,
  );
}

/** What a program can test of a failed job's error. */
function visible(err: unknown): object {
  const e = err as SieveError & { cause?: NodeJS.ErrnoException };
  return {
    sieveError: err instanceof SieveError,
    code: e.code,
    file: e.file,
    message: e.message,
    cause: e.cause === undefined ? undefined : { isError: e.cause instanceof Error, code: e.cause.code, syscall: e.cause.syscall, errno: e.cause.errno, path: e.cause.path, message: e.cause.message },
  };
}

describe('errors from the worker keep their cause (issue 9, item 13)', () => {
  it('a real job failing with EISDIR: the same error, cause and all, from the worker as inline', async () => {
    const dir = tempDir();
    mkdirSync(tableFileName(dir, 7)); // the output path is a directory
    const worker = new WorkerRunner();
    const fromWorker = await failure(worker, flushJob(dir, 7));
    await worker.close();
    const inline = new InlineRunner(new NodeFileSystem());
    const fromInline = await failure(inline, flushJob(dir, 7));
    await inline.close();

    expect(isSieveError(fromWorker, 'IO_ERROR')).toBe(true);
    const cause = (fromWorker as Error).cause as NodeJS.ErrnoException;
    expect(cause).toBeInstanceOf(Error);
    expect(cause.code).toBe('EISDIR');
    expect(cause.syscall).toBe('open');
    expect(typeof cause.errno).toBe('number');
    expect(cause.path).toBe(tableFileName(dir, 7));
    expect(cause.message).toMatch(/EISDIR/);
    expect(visible(fromWorker)).toEqual(visible(fromInline));
  });

  it('a database latches the worker-thread failure with its cause', async () => {
    const dir = tempDir();
    const db = await DB.open(dir, { writeBufferSize: 4096 });
    onTestFinished(() => db.close());
    // Every table number the next flushes can take is a directory.
    const used = Math.max(...readdirSync(dir).map((n) => Number.parseInt(n.replace(/^MANIFEST-/, ''), 10)).filter(Number.isFinite));
    for (let n = used + 1; n <= used + 64; n++) mkdirSync(tableFileName(dir, n));
    let err: unknown;
    const acked: number[] = [];
    for (let i = 0; i < 2000 && err === undefined; i++) {
      try {
        await db.put(`key-${i}`, 'v'.repeat(100));
        acked.push(i);
      } catch (e) {
        err = e;
      }
    }
    expect(isSieveError(err, 'IO_ERROR')).toBe(true);
    const cause = (err as Error).cause as NodeJS.ErrnoException;
    expect(cause?.code).toBe('EISDIR');
    expect(cause.syscall).toBe('open');
    expect(typeof cause.errno).toBe('number');
    await db.close();

    for (let n = used + 1; n <= used + 64; n++) rmSync(tableFileName(dir, n), { recursive: true, force: true });
    const reopened = await DB.open(dir, { writeBufferSize: 4096 });
    for (const i of acked) expect((await reopened.get(`key-${i}`))?.toString()).toBe('v'.repeat(100));
    await reopened.close();
  });

  it('serializes a SieveError with its file, offset and cause chain, and a system error with every field', () => {
    const errno = Object.assign(new Error("ENOSPC: no space left on device, rename '/d/a' -> '/d/b'"), {
      code: 'ENOSPC',
      syscall: 'rename',
      errno: -28,
      path: '/d/a',
      dest: '/d/b',
    });
    const original = corruption('bad block checksum', { file: '/d/000012.ldb', offset: 4096, cause: errno });
    const back = deserializeError(structuredClone(serializeError(original))) as SieveError;
    expect(back).toBeInstanceOf(SieveError);
    expect([back.code, back.file, back.offset, back.message]).toEqual(['CORRUPTION', '/d/000012.ldb', 4096, original.message]);
    const cause = back.cause as NodeJS.ErrnoException & { dest?: string };
    expect(cause).toBeInstanceOf(Error);
    expect([cause.code, cause.syscall, cause.errno, cause.path, cause.dest, cause.message]).toEqual(['ENOSPC', 'rename', -28, '/d/a', '/d/b', errno.message]);

    const plain = deserializeError(structuredClone(serializeError(errno))) as NodeJS.ErrnoException;
    expect(plain).not.toBeInstanceOf(SieveError); // as inline: the database wraps it when it latches
    expect([plain.code, plain.syscall, plain.errno, plain.path]).toEqual(['ENOSPC', 'rename', -28, '/d/a']);

    expect(deserializeError(structuredClone(serializeError('a string thrown'))).message).toBe('a string thrown');
    let deep: Error = new Error('bottom');
    for (let i = 0; i < 10; i++) deep = new Error(`level ${i}`, { cause: deep });
    let depth = 0;
    for (let e: unknown = deserializeError(structuredClone(serializeError(deep))); e instanceof Error; e = e.cause) depth++;
    expect(depth).toBe(5);
  });
});
