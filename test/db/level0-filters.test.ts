/**
 * A lookup asks the whole-table filters of every level-0 file in its range at once (db/level0-
 * filters.ts), then visits only the files that may hold the key, newest first. These tests hold
 * level 0 at many overlapping files and check that lookups still answer as a sorted map does
 * (puts and deletes shadowing older files), that the filter counters still count each file a
 * lookup came to, that files whose filter is of another policy are still consulted in order, and
 * that a damaged older file is reported by the lookups that reach it and by no other.
 */
import { describe, expect, it, vi } from 'vitest';
import { Table } from '../../src/sstable/table.js';
import { DB, type OpenOptions } from '../../src/db.js';
import { BloomFilterPolicy } from '../../src/filter/bloom.js';
import { RibbonFilterPolicy } from '../../src/filter/ribbon.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { ErrorCode, SieveError } from '../../src/errors.js';
import { rng, testSeed } from '../support/seed.js';

/** Level 0 kept as it is: no compaction is triggered by its file count. */
const HELD: OpenOptions = { writeBufferSize: 8 * 1024, l0CompactionTrigger: 200, l0SlowdownTrigger: 300, l0StopTrigger: 400 };

const key = (i: number): string => `key-${String(i).padStart(6, '0')}`;
const stats = (db: DB): Record<string, number> => JSON.parse(db.getProperty('sievekv.stats')!) as Record<string, number>;
const filesAt = (db: DB, level: number): number => Number(db.getProperty(`sievekv.num-files-at-level${level}`));

/** Random puts and deletes of keys [0, range) into `model` until level 0 holds `files` files. */
function fillLevel0(db: DB, model: Map<string, string>, range: number, files: number, next: () => number): void {
  let n = 0;
  while (filesAt(db, 0) < files) {
    const k = key(Math.floor(next() * range));
    if (next() < 0.2) {
      db.delSync(k);
      model.delete(k);
    } else {
      const v = `v${n++}-${'x'.repeat(Math.floor(next() * 40))}`;
      db.putSync(k, v);
      model.set(k, v);
    }
  }
}

function expectLike(db: DB, model: Map<string, string>, range: number, note: string): void {
  for (let i = 0; i < range; i++) expect(db.getSync(key(i))?.toString(), `${note} ${key(i)}`).toBe(model.get(key(i)));
  for (let i = 0; i < range; i += 7) expect(db.getSync(`${key(i)}~`), note).toBeUndefined();
}

describe('level-0 filters asked together', () => {
  it('answers like a map over a dozen overlapping level-0 files, before and after a reopen', async () => {
    const seed = testSeed();
    const fs = new MemFileSystem();
    const model = new Map<string, string>();
    const db = await DB.open('/db', { ...HELD, fs });
    fillLevel0(db, model, 3000, 12, rng(seed));
    expect(filesAt(db, 1)).toBe(0);
    expectLike(db, model, 3000, `seed ${seed}`);
    // One more file changes the list the lookups hold.
    fillLevel0(db, model, 3000, filesAt(db, 0) + 1, rng(seed + 1));
    expectLike(db, model, 3000, `seed ${seed}, one file more`);
    await db.close();
    const again = await DB.open('/db', { ...HELD, fs });
    expectLike(again, model, 3000, `seed ${seed}, reopened`);
    await again.close();
  });

  it('counts each level-0 file a missing key came to as a filter check, nearly all negatives', async () => {
    const db = await DB.open('/db', { ...HELD, fs: new MemFileSystem() });
    fillLevel0(db, new Map(), 2000, 8, rng(testSeed() ^ 0x51));
    const files = filesAt(db, 0);
    expect([1, 2, 3, 4, 5, 6].map((l) => filesAt(db, l))).toEqual([0, 0, 0, 0, 0, 0]);
    const before = stats(db);
    const lookups = 400;
    // Well inside every file's key range (each holds ~150 random keys of 2,000): each lookup comes
    // to each file once.
    for (let i = 0; i < lookups; i++) expect(db.getSync(`${key(400 + i * 3)}~`)).toBeUndefined();
    const after = stats(db);
    const delta = (name: string): number => after[name]! - before[name]!;
    expect(delta('filesConsulted')).toBe(lookups * files);
    expect(delta('filterChecks')).toBe(lookups * files);
    expect(delta('filterNegatives') + delta('filterFalsePositives')).toBe(lookups * files);
    expect(delta('filterNegatives')).toBeGreaterThan(0.95 * lookups * files);
    await db.close();
  });

  it('visits only the level-0 tables whose filter may hold the key', async () => {
    const db = await DB.open('/db', { ...HELD, fs: new MemFileSystem() });
    fillLevel0(db, new Map(), 2000, 8, rng(testSeed() ^ 0x54));
    const files = filesAt(db, 0);
    for (let i = 0; i < 10; i++) db.getSync(`${key(400 + i)}~`); // tables open, filters loaded
    const gets = vi.spyOn(Table.prototype, 'get');
    const lookups = 400;
    for (let i = 0; i < lookups; i++) expect(db.getSync(`${key(400 + i * 3)}~`)).toBeUndefined();
    // Each table's own get would ask its filter: only false positives reach it now.
    expect(gets.mock.calls.length).toBeLessThan(0.05 * lookups * files);
    gets.mockRestore();
    await db.close();
  });

  it('reports a table closed by the cache and gone since to the lookups that reach it (maxOpenFiles below level 0)', async () => {
    const fs = new MemFileSystem();
    const db = await DB.open('/db', { ...HELD, fs, maxOpenFiles: 10 });
    fillLevel0(db, new Map(), 2000, 14, rng(testSeed() ^ 0x55));
    for (let i = 0; i < 20; i++) db.getSync(`${key(400 + i)}~`);
    const oldest = fs.list('/db').filter((f) => f.endsWith('.ldb')).sort()[0]!;
    fs.remove(`/db/${oldest}`);
    let errors = 0;
    for (let i = 0; i < 100; i++) {
      try {
        db.getSync(`${key(500 + i * 7)}~`);
      } catch (err) {
        expect(err).toBeInstanceOf(SieveError);
        errors++;
      }
    }
    // Every lookup in its range comes to the missing table (the newer ones hold none of these keys).
    expect(errors).toBe(100);
    await db.close().catch(() => undefined);
  });

  it('consults in order the files whose whole-table filter is of another policy', async () => {
    const fs = new MemFileSystem();
    const model = new Map<string, string>();
    const next = rng(testSeed() ^ 0x52);
    // Level 0 first written with Ribbon whole-table filters, then with the default blocked Bloom:
    // a lookup's level 0 mixes both, newer blocked Bloom files shadowing older Ribbon ones.
    const first = await DB.open('/db', { ...HELD, fs, filterPolicy: new BloomFilterPolicy(10), tableFilterPolicy: new RibbonFilterPolicy(10) });
    fillLevel0(first, model, 1500, 4, next);
    await first.close();
    const db = await DB.open('/db', { ...HELD, fs });
    fillLevel0(db, model, 1500, filesAt(db, 0) + 5, next);
    expect(filesAt(db, 1)).toBe(0);
    expectLike(db, model, 1500, 'mixed policies');
    await db.close();
  });

  it('reports a damaged older file only to the lookups that reach it', async () => {
    const fs = new MemFileSystem();
    // The oldest level-0 file: 60 keys a-*, written alone and flushed when the database reopens.
    const first = await DB.open('/db', { ...HELD, fs });
    for (let i = 0; i < 60; i++) first.putSync(`a-${i}`, `old-${i}`);
    await first.close();
    const second = await DB.open('/db', { ...HELD, fs });
    while (filesAt(second, 0) < 1) await new Promise((r) => setTimeout(r, 5));
    const oldest = fs.list('/db').filter((f) => f.endsWith('.ldb')).sort()[0]!;
    // Newer files: the even a-* keys again, and b-* keys outside the oldest file's range.
    const model = new Map<string, string>();
    for (let i = 0; i < 60; i += 2) second.putSync(`a-${i}`, `new-${i}`);
    fillLevel0(second, model, 2000, 5, rng(testSeed() ^ 0x53));
    await second.close();
    // Damage the oldest table's footer: it cannot be opened.
    const bytes = fs.readFile(`/db/${oldest}`).slice();
    bytes[bytes.length - 1] ^= 0xff;
    const out = fs.createWritable(`/db/${oldest}`);
    out.append(bytes);
    out.sync();
    out.close();
    const db = await DB.open('/db', { ...HELD, fs });
    // A key shadowed by a newer file: found there, the damaged file never reached.
    for (let i = 0; i < 60; i += 2) expect(db.getSync(`a-${i}`)?.toString()).toBe(`new-${i}`);
    for (let i = 0; i < 2000; i += 13) expect(db.getSync(key(i))?.toString()).toBe(model.get(key(i)));
    // A key only the damaged file could hold: CORRUPTION, not "absent".
    for (const i of [1, 3, 59]) {
      let error: unknown;
      try {
        db.getSync(`a-${i}`);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(SieveError);
      expect((error as SieveError).code).toBe(ErrorCode.CORRUPTION);
    }
    await db.close();
  });
});
