/**
 * tableFileCacheSize through the database: reads that keep coming back to a table give it an
 * image in memory, which each block joins when first read (sievekv.stats counts the block reads
 * answered from memory and the bytes held, never more than the option), the answers are those of
 * a database that reads every block from its files, and a bad size is INVALID_ARGUMENT. Images
 * serve databases whose tables are not mapped (mmapReads off, or no addon); a mapped table takes
 * none.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { isSieveError } from '../../src/errors.js';
import { rng, testSeed } from '../support/seed.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const key = (i: number): string => `key-${String(i).padStart(7, '0')}`;
const value = (i: number): string => `value-${i}-`.repeat(1 + (i % 7));
const N = 20_000;

interface Stats {
  blocksRead: number;
  blocksReadFromMemory: number;
  tableFileCacheBytes: number;
  tableFileCacheFiles: number;
}

describe('tableFileCacheSize', () => {
  it('answers from memory what it answered from the files, within its budget', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sievekv-resident-'));
    dirs.push(dir);
    const small = { writeBufferSize: 64 * 1024, maxFileSize: 64 * 1024, blockCacheSize: 0 };
    const db = await DB.open(dir, small);
    for (let i = 0; i < N; i += 500) db.batchSync(Array.from({ length: 500 }, (_, j) => ({ type: 'put' as const, key: key(i + j), value: value(i + j) })));
    await db.compactRange();
    await db.close();

    const next = rng(testSeed());
    // Each key read twice: a block comes into a file's image the first time it is read.
    const once = Array.from({ length: 1500 }, () => Math.floor(next() * (N + N / 10)));
    const probes = [...once, ...once];
    const budget = 256 * 1024;
    const answers = async (tableFileCacheSize: number, mmapReads = false): Promise<{ got: (string | undefined)[]; stats: Stats }> => {
      // Images are what reads use where tables are not mapped.
      const reader = await DB.open(dir, { ...small, mmapReads, tableFileCacheSize });
      const got = probes.map((p) => reader.getSync(key(p))?.toString());
      const stats = JSON.parse(reader.getProperty('sievekv.stats')!) as Stats;
      await reader.close();
      return { got, stats };
    };
    const fromFiles = await answers(0);
    const fromMemory = await answers(budget);
    expect(fromMemory.got).toEqual(fromFiles.got);
    expect(fromFiles.got.filter((v, i) => v !== (probes[i]! < N ? value(probes[i]!) : undefined))).toEqual([]);
    expect(fromFiles.stats.blocksReadFromMemory).toBe(0);
    expect(fromFiles.stats.tableFileCacheBytes).toBe(0);
    expect(fromMemory.stats.blocksRead).toBe(fromFiles.stats.blocksRead);
    expect(fromMemory.stats.blocksReadFromMemory).toBeGreaterThan(fromMemory.stats.blocksRead / 4);
    expect(fromMemory.stats.tableFileCacheFiles).toBeGreaterThan(0);
    expect(fromMemory.stats.tableFileCacheBytes).toBeGreaterThan(0);
    expect(fromMemory.stats.tableFileCacheBytes).toBeLessThanOrEqual(budget);
    const mapped = await answers(budget, true);
    expect(mapped.got).toEqual(fromFiles.got);
    expect(mapped.stats.tableFileCacheBytes).toBe(0);
    expect(mapped.stats.blocksReadFromMemory).toBe(0);
  });

  it('a size that is not a non-negative integer is INVALID_ARGUMENT', async () => {
    for (const bad of [-1, 1.5, '64']) {
      const dir = mkdtempSync(join(tmpdir(), 'sievekv-resident-'));
      dirs.push(dir);
      const err = await DB.open(dir, { tableFileCacheSize: bad as number }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isSieveError(err, 'INVALID_ARGUMENT')).toBe(true);
    }
  });
});
