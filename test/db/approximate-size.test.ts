/**
 * `db.approximateSize(start, end)` (LevelDB's GetApproximateSizes): table bytes of [start, end)
 * from the index blocks — near the tables' total for the whole key space, near proportional for
 * part of it, 0 for the memtable alone and for empty or inverted ranges; additive over adjacent
 * ranges (a property); typed errors for bad input.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { codeOf } from '../support/error-code.js';

const key = (i: number): string => `key${String(i).padStart(6, '0')}`;

/** Bytes of the table files in the directory. */
function tableBytes(fs: MemFileSystem): number {
  return fs
    .list('/db')
    .filter((n) => n.endsWith('.ldb'))
    .reduce((sum, n) => sum + fs.size(`/db/${n}`), 0);
}

async function loaded(n: number): Promise<{ db: DB; fs: MemFileSystem }> {
  const fs = new MemFileSystem();
  const db = await DB.open('/db', { fs, writeBufferSize: 64 * 1024, compression: 'none', maxFileSize: 32 * 1024 });
  const value = 'x'.repeat(100);
  for (let i = 0; i < n; i += 500) {
    await db.batch(Array.from({ length: Math.min(500, n - i) }, (_, j) => ({ type: 'put' as const, key: key(i + j), value })));
  }
  await db.compactRange();
  return { db, fs };
}


describe('approximateSize', () => {
  it('counts table bytes by key range: about all of them for the key space, about a half for half of it', async () => {
    const { db, fs } = await loaded(4000);
    const total = tableBytes(fs);
    expect(total).toBeGreaterThan(400_000);
    const all = await db.approximateSize('', 'key~');
    expect(all).toBeLessThanOrEqual(total);
    expect(all).toBeGreaterThan(0.95 * total);
    const half = await db.approximateSize(key(0), key(2000));
    expect(half / all).toBeGreaterThan(0.45);
    expect(half / all).toBeLessThan(0.55);
    const tenth = db.approximateSizeSync(key(1000), key(1400));
    expect(tenth / all).toBeGreaterThan(0.08);
    expect(tenth / all).toBeLessThan(0.12);
    expect(await db.approximateSize(key(5000), key(6000))).toBe(0); // past every table
    expect(await db.approximateSize(key(10), key(10))).toBe(0);
    expect(await db.approximateSize(key(20), key(10))).toBe(0);
    await db.close();
  });

  it('does not count the memtable (as LevelDB)', async () => {
    const fs = new MemFileSystem();
    const db = await DB.open('/db', { fs, compression: 'none' });
    for (let i = 0; i < 1000; i++) db.putSync(key(i), 'x'.repeat(100));
    expect(await db.approximateSize('', '~')).toBe(0);
    await db.compactRange();
    expect(await db.approximateSize('', '~')).toBeGreaterThan(0.95 * tableBytes(fs));
    await db.close();
  });

  it('is additive: size(a, c) = size(a, b) + size(b, c) for a ≤ b ≤ c, and never negative', async () => {
    const { db } = await loaded(3000);
    const bound = fc.integer({ min: -100, max: 3100 }).map((i) => (i < 0 ? '' : key(i)));
    fc.assert(
      fc.property(bound, bound, bound, (x, y, z) => {
        const [a, b, c] = [x, y, z].sort();
        const ab = db.approximateSizeSync(a!, b!);
        const bc = db.approximateSizeSync(b!, c!);
        expect(ab).toBeGreaterThanOrEqual(0);
        expect(db.approximateSizeSync(a!, c!)).toBe(ab + bc);
      }),
      { numRuns: 300 },
    );
    await db.close();
  });

  it('bad input is INVALID_ARGUMENT (the async form rejects); after close CLOSED', async () => {
    const db = await DB.open('/db', { fs: new MemFileSystem() });
    expect(await codeOf(() => db.approximateSize(1 as never, 'a'))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(() => db.approximateSizeSync('a', null as never))).toBe('INVALID_ARGUMENT');
    await db.close();
    expect(await codeOf(() => db.approximateSize('a', 'b'))).toBe('CLOSED');
  });
});
