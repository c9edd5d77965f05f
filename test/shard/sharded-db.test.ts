/**
 * A sharded database: DezhouKV's router sends each key to one of four regions, each a whole LSM
 * tree in its own sub-directory, all sharing one WAL, sequence space and MANIFEST.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { isSieveError } from '../../src/errors.js';
import { DezhouRegionRouter } from '../../src/shard/dezhou-router.js';
import { JumpRouter } from '../../src/shard/jump-router.js';
import type { RegionFigures } from '../../src/db/properties.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'sievekv-shard-'));
  dirs.push(d);
  return d;
};

const router = new DezhouRegionRouter();
const key = (i: number): Buffer => Buffer.from(`key-${String(i).padStart(7, '0')}`);
const regions = (db: DB): RegionFigures[] => JSON.parse(db.getProperty('sievekv.regions')!) as RegionFigures[];

describe('a database sharded by DezhouKV’s router', () => {
  it('keeps each region in its sub-directory, reads like one ordered map, and shows the skew', async () => {
    const dir = tempDir();
    const db = await DB.open(dir, { router, writeBufferSize: 64 * 1024 });
    const n = 20_000;
    const model = new Map<string, string>();
    for (let i = 0; i < n; i += 100) {
      // Each batch spans regions: 100 consecutive keys hash all over the split.
      const ops = [];
      for (let j = i; j < i + 100; j++) {
        ops.push({ type: 'put' as const, key: key(j), value: `v${j}` });
        model.set(key(j).toString(), `v${j}`);
      }
      await db.batch(ops);
    }
    for (let i = 0; i < n; i += 7) {
      await db.del(key(i));
      model.delete(key(i).toString());
    }
    await db.compactRange();
    for (const r of [1, 2, 3]) {
      expect(existsSync(join(dir, `region-${r}`))).toBe(true);
      expect(readdirSync(join(dir, `region-${r}`)).some((f) => f.endsWith('.ldb'))).toBe(true);
    }
    // Region 0 (the database directory) holds the WAL and MANIFEST and, for this split, almost no keys.
    expect(readdirSync(dir).some((f) => f.startsWith('MANIFEST-'))).toBe(true);

    // Every key reads back from its region; the iteration merges regions in key order, both ways.
    for (const [k, v] of model) expect(db.getSync(k)?.toString()).toBe(v);
    const want = [...model.keys()].sort();
    const forward: string[] = [];
    for await (const [k] of db.iterator()) forward.push(k.toString());
    expect(forward).toEqual(want);
    const backward: string[] = [];
    for await (const [k] of db.iterator({ reverse: true, gte: key(5000), lt: key(6000) })) backward.push(k.toString());
    expect(backward).toEqual(want.filter((k) => k >= key(5000).toString() && k < key(6000).toString()).reverse());

    // The skew is visible: ≈ 2/3, 1/15, 4/15 of the keys (HyperLogLog estimates, ±5%).
    const figures = regions(db);
    const total = model.size;
    const share = (r: number): number => figures[r]!.estimatedKeys / total;
    expect(share(1)).toBeGreaterThan(0.6);
    expect(share(1)).toBeLessThan(0.72);
    expect(share(2)).toBeGreaterThan(0.05);
    expect(share(2)).toBeLessThan(0.085);
    expect(share(3)).toBeGreaterThan(0.23);
    expect(share(3)).toBeLessThan(0.3);
    expect(figures[1]!.bytes).toBeGreaterThan(figures[3]!.bytes);
    await db.close();
  });

  it('asks only the key’s region: its gets and filter checks move, the others’ do not', async () => {
    const dir = tempDir();
    const db = await DB.open(dir, { router, writeBufferSize: 64 * 1024 });
    for (let i = 0; i < 5000; i++) db.putSync(key(i), `v${i}`);
    await db.compactRange();
    // Absent keys inside the tables' key ranges (key-0000123x sorts between two written keys).
    const inRegion2: Buffer[] = [];
    for (let i = 0; inRegion2.length < 500; i++) {
      const absent = Buffer.concat([key(i % 5000), Buffer.from(`x${i}`)]);
      if (router.regionOf(absent) === 2) inRegion2.push(absent);
    }
    const before = regions(db);
    for (const k of inRegion2) expect(db.getSync(k)).toBeUndefined();
    const after = regions(db);
    for (const r of [0, 1, 3]) {
      expect(after[r]!.gets).toBe(before[r]!.gets);
      expect(after[r]!.filterChecks).toBe(before[r]!.filterChecks);
    }
    expect(after[2]!.gets - before[2]!.gets).toBe(500);
    expect(after[2]!.filterChecks - before[2]!.filterChecks).toBeGreaterThan(0);
    expect(after[2]!.filterNegatives - before[2]!.filterNegatives).toBeGreaterThan(400);
    await db.close();
  });

  it('keeps a batch across regions atomic and a snapshot consistent across regions', async () => {
    const dir = tempDir();
    const db = await DB.open(dir, { router });
    const keys = Array.from({ length: 50 }, (_, i) => key(i));
    expect(new Set(keys.map((k) => router.regionOf(k))).size).toBeGreaterThanOrEqual(3);
    await db.batch(keys.map((k) => ({ type: 'put' as const, key: k, value: 'one' })), { sync: true });
    const snap = db.snapshot();
    await db.batch(keys.map((k) => ({ type: 'put' as const, key: k, value: 'two' })), { sync: true });
    for (const k of keys) expect(db.getSync(k, { snapshot: snap })?.toString()).toBe('one');
    const seen = new Set<string>();
    for await (const [, v] of db.iterator({ snapshot: snap })) seen.add(v.toString());
    expect([...seen]).toEqual(['one']);
    snap.release();
    await db.close();
    const again = await DB.open(dir, { router });
    for (const k of keys) expect(again.getSync(k)?.toString()).toBe('two');
    await again.close();
  });

  it('refuses a reopen with another router, or none, before writing anything', async () => {
    const dir = tempDir();
    const db = await DB.open(dir, { router });
    await db.put('a', '1');
    await db.close();
    const listing = readdirSync(dir).sort();
    for (const other of [{ router: new JumpRouter(4) }, {}]) {
      let caught: unknown;
      try {
        await DB.open(dir, other);
      } catch (err) {
        caught = err;
      }
      expect(isSieveError(caught, 'INVALID_ARGUMENT')).toBe(true);
      expect(readdirSync(dir).sort()).toEqual(listing);
    }
    const back = await DB.open(dir, { router });
    expect(back.getSync('a')?.toString()).toBe('1');
    await back.close();
  });
});
