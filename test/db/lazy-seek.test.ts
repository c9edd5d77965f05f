/**
 * Lazy seeks: a seek puts off every table and level whose filters exclude the target's user key
 * (merging-iterator.ts), so a seek that lands on a key one source holds, read as one entry, reads
 * that source's data block and no other; the sources put off are sought as soon as the scan moves
 * past the key. Checked through the database: a memtable, a level-0 table and a deeper level, each
 * holding a quarter or half of the keys.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { BlockedBloomFilterPolicy } from '../../src/filter/blocked-bloom.js';
import type { FilterPolicy, FilterProbe } from '../../src/filter/policy.js';
import { rng } from '../support/seed.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const N = 8000;
const key = (i: number): string => `key-${String(i).padStart(6, '0')}`;
const value = (i: number): string => `value of ${i} `.repeat(4);

interface Stats {
  blocksRead: number;
  blockCacheHits: number;
}

/**
 * Even keys in the last level, keys ≡ 1 (mod 4) in a table above it (flushed by a compactRange
 * of an empty range), keys ≡ 3 (mod 4) in the memtable.
 */
async function threeSources(): Promise<DB> {
  const dir = mkdtempSync(join(tmpdir(), 'sievekv-lazy-seek-'));
  dirs.push(dir);
  const puts = (r: number) => Array.from({ length: N / 4 }, (_, j) => 4 * j + r).map((i) => ({ type: 'put' as const, key: key(i), value: value(i) }));
  const db = await DB.open(dir);
  db.batchSync([...puts(0), ...puts(2)]);
  await db.compactRange();
  db.batchSync(puts(1));
  await db.compactRange('zzz', 'zzzz');
  db.batchSync(puts(3));
  return db;
}

/** Files at each level, as "level:count" for the non-empty ones. */
function shape(db: DB): string {
  const out: string[] = [];
  for (let level = 0; level < 7; level++) {
    const n = Number(db.getProperty(`sievekv.num-files-at-level${level}`));
    if (n > 0) out.push(`${level}:${n}`);
  }
  return out.join(' ');
}

describe('lazy seeks', () => {
  it('a seek that lands on a key and reads it touches one data block; the scan after it sees every source', async () => {
    const db = await threeSources();
    expect(shape(db).split(' ').length).toBe(2); // two levels of tables, then the memtable
    const stats = (): Stats => JSON.parse(db.getProperty('sievekv.stats')!) as Stats;
    const touched = (s: Stats): number => s.blocksRead + s.blockCacheHits;

    const random = rng(7);
    const seeks = 600;
    const before = stats();
    for (let n = 0; n < seeks; n++) {
      const i = Math.floor(random() * N);
      const it = db.iterator();
      it.seek(key(i));
      const entry = it.nextSync();
      it.close();
      expect(entry?.map(String)).toEqual([key(i), value(i)]);
    }
    // Eager seeks position all three sources: two data blocks per seek (the memtable reads
    // none). Lazy ones read only the block of the table holding the key (none for memtable
    // keys), plus the filters' rare false positives.
    const perSeek = (touched(stats()) - touched(before)) / seeks;
    expect(perSeek).toBeLessThan(1);

    // Seeks to keys and between keys, then steps: every source comes in, in order.
    for (let n = 0; n < 200; n++) {
      const i = Math.floor(random() * N);
      const between = random() < 0.5;
      const it = db.iterator();
      it.seek(between ? `${key(i)}~` : key(i));
      const got: string[] = [];
      for (let step = 0; step < 6; step++) got.push(String(it.nextSync()?.[0]));
      it.close();
      const first = between ? i + 1 : i;
      expect(got).toEqual(Array.from({ length: 6 }, (_, s) => (first + s < N ? key(first + s) : 'undefined')));
    }

    // Reverse after a lazy seek: the sources put off are sought for the switch.
    for (let n = 0; n < 100; n++) {
      const i = 3 + Math.floor(random() * (N - 3));
      const it = db.iterator({ reverse: true });
      it.seek(key(i));
      const got = [0, 1, 2].map(() => String(it.nextSync()?.[0]));
      it.close();
      expect(got).toEqual([key(i), key(i - 1), key(i - 2)]);
    }
    await db.close();
  });

  it('asks each table\'s whole-table filter once per seek: the level asks it, the table iterator does not again', async () => {
    // The default whole-table filter, counting the questions asked of it through probes.
    const inner = new BlockedBloomFilterPolicy(15);
    let asked = 0;
    const counting: FilterPolicy = {
      name: inner.name,
      createFilter: (keys) => inner.createFilter(keys),
      keyMayMatch: (k, filter) => inner.keyMayMatch(k, filter),
      newProbe(): FilterProbe {
        const probe = inner.newProbe();
        return {
          setKey: (k) => probe.setKey(k),
          mayMatch: (filter, start, end) => {
            asked++;
            return probe.mayMatch(filter, start, end);
          },
        };
      },
    };
    const dir = mkdtempSync(join(tmpdir(), 'sievekv-lazy-seek-'));
    dirs.push(dir);
    const db = await DB.open(dir, { tableFilterPolicy: counting });
    db.batchSync(Array.from({ length: 2000 }, (_, i) => ({ type: 'put' as const, key: key(i), value: value(i) })));
    await db.compactRange(); // one table, in one level; the memtable empty
    expect(shape(db)).toMatch(/^\d:1$/);
    const random = rng(11);
    const seeks = 200;
    asked = 0;
    for (let n = 0; n < seeks; n++) {
      const i = Math.floor(random() * 2000);
      const it = db.iterator();
      it.seek(key(i));
      expect(it.nextSync()?.map(String)).toEqual([key(i), value(i)]);
      it.close();
    }
    expect(asked).toBe(seeks);
    await db.close();
  });
});
