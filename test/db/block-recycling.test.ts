/**
 * Recycled blocks (sstable/block.ts's block pool, Block.recyclable): the block cache gives back
 * blocks only point lookups used, and the next block read takes the block, its view and its bytes.
 * Nothing may read them after: with pooled bytes poisoned (0xa5), gets, getMany, iterators held
 * open across many evictions, reverse scans and `copy: false` pages keep answering what a Map of
 * the same writes answers, under a block cache a few blocks large.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { putFixed32 } from '../../src/format/coding.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { Block, setPooledBlockPoison, takeBlockBytes } from '../../src/sstable/block.js';
import { rng, testSeed } from '../support/seed.js';

beforeAll(() => setPooledBlockPoison(true));
afterAll(() => setPooledBlockPoison(false));

/** A block of `size` bytes from the pool: zeros (entries of no length), one restart point at 0. */
function takeEmptyBlock(size: number, offset: number): Block {
  const bytes = takeBlockBytes(size);
  bytes.fill(0, 0, size);
  putFixed32(bytes, size - 8, 0);
  putFixed32(bytes, size - 4, 1);
  return Block.fromTaken(bytes, 'f', offset);
}

describe('the block pool', () => {
  it('gives a block let go of, with its bytes, to the next read of its size class', () => {
    const a = takeEmptyBlock(8, 0); // restart array only: 8 bytes
    expect(a.size).toBe(8);
    expect(a.data.length).toBe(512); // its size class
    const b = takeEmptyBlock(8, 100);
    expect(a.data.buffer === b.data.buffer && a.data.byteOffset === b.data.byteOffset).toBe(false);
    a.drop(); // not pinned: back to the pool
    expect(a.data[0]).toBe(0xa5); // poisoned
    const c = takeEmptyBlock(8, 200);
    expect(c).toBe(a); // the same object, set up anew
    expect(c.offset).toBe(200);
    expect(c.numRestarts).toBe(1);
    expect(b.offset).toBe(100);
  });

  it('keeps a pinned block until its last pin goes, and never pools bytes of other sizes', () => {
    const a = takeEmptyBlock(4100, 0);
    expect(a.data.length).toBe(4608);
    a.pin();
    a.drop();
    expect(takeEmptyBlock(4100, 1)).not.toBe(a); // still pinned: not in the pool
    a.unpin();
    expect(takeEmptyBlock(4500, 2)).toBe(a); // same 512-byte class as 4100
    const own = new Block(new Uint8Array(4), 'f', 3); // bytes of its own: never pooled
    own.drop();
    expect(takeEmptyBlock(8, 4).data.length).toBe(512);
    expect(own.recyclable).toBe(false);
  });
});

describe('a database whose block cache recycles', () => {
  it('gets, getMany and iterators held across evictions answer as the model does', async () => {
    const fs = new MemFileSystem();
    const db = await DB.open('/db', { fs, writeBufferSize: 64 * 1024, maxFileSize: 64 * 1024, blockCacheSize: 6 * 4096 });
    const next = rng(testSeed());
    const model = new Map<string, string>();
    const key = (i: number): string => `k${String(i).padStart(6, '0')}`;
    const N = 6000;
    for (let i = 0; i < N; i += 200) {
      const ops = Array.from({ length: 200 }, (_, j) => {
        const k = key(i + j);
        const v = `v${i + j}-`.repeat(1 + Math.floor(next() * 12));
        model.set(k, v);
        return { type: 'put' as const, key: k, value: v };
      });
      db.batchSync(ops);
    }
    await db.compactRange();
    const sorted = [...model.keys()].sort();
    const evictionsBefore = JSON.parse(db.getProperty('sievekv.stats')!) as { blockCacheMisses: number };

    // Iterators opened now and stepped between the gets below, forward and backward.
    const held = Array.from({ length: 4 }, (_, h) => {
      const reverse = h % 2 === 1;
      const it = db.iterator({ reverse });
      return { it, reverse, at: reverse ? sorted.length - 1 : 0 };
    });
    for (let round = 0; round < 3000; round++) {
      const i = Math.floor(next() * (N + 100));
      const got = db.getSync(key(i));
      expect(got?.toString()).toBe(model.get(key(i)));
      if (round % 50 === 0) {
        const keys = Array.from({ length: 8 }, () => key(Math.floor(next() * N)));
        const values = db.getManySync(keys);
        expect(values.map((v) => v?.toString())).toEqual(keys.map((k) => model.get(k)));
      }
      if (round % 7 === 0) {
        const h = held[round % held.length]!;
        const entry = h.it.nextSync();
        const expectedKey = sorted[h.at];
        expect(entry?.[0].toString()).toBe(expectedKey);
        if (expectedKey !== undefined) expect(entry?.[1].toString()).toBe(model.get(expectedKey));
        h.at += h.reverse ? -1 : 1;
      }
      if (round % 500 === 0) {
        // A page of views, each valid until the next call: checked after the page is complete.
        const start = Math.floor(next() * (N - 400));
        const it = db.iterator({ gte: key(start), copy: false });
        const page = it.nextvSync(300);
        expect(page.map(([k, v]) => `${k.toString()}=${v.toString()}`)).toEqual(sorted.slice(start, start + 300).map((k) => `${k}=${model.get(k)}`));
        it.close();
      }
    }
    for (const h of held) h.it.close();
    const stats = JSON.parse(db.getProperty('sievekv.stats')!) as { blockCacheMisses: number };
    expect(stats.blockCacheMisses - evictionsBefore.blockCacheMisses).toBeGreaterThan(1000); // the cache churned
    await db.close();
  });
});

describe('a full block cache and point lookups', () => {
  it('reads a block asked for once without caching it, and caches it at its second read', async () => {
    const fs = new MemFileSystem();
    const db = await DB.open('/db', { fs, writeBufferSize: 64 * 1024, maxFileSize: 64 * 1024, blockCacheSize: 8 * 4096 });
    const key = (i: number): string => `k${String(i).padStart(6, '0')}`;
    const value = (i: number): string => `v${i}-`.repeat(12);
    for (let i = 0; i < 6000; i += 200) {
      db.batchSync(Array.from({ length: 200 }, (_, j) => ({ type: 'put' as const, key: key(i + j), value: value(i + j) })));
    }
    await db.compactRange();
    type Stats = { blocksRead: number; blockCacheHits: number; blockCacheDeclined: number };
    const stats = (): Stats => JSON.parse(db.getProperty('sievekv.stats')!) as Stats;
    // Fill the cache with blocks of the first half of the keys, then some more: declined.
    for (let i = 0; i < 3000; i += 7) expect(db.getSync(key(i))?.toString()).toBe(value(i));
    expect(stats().blockCacheDeclined).toBeGreaterThan(0);

    const hot = 4500;
    const reads: Stats[] = [stats()];
    for (let n = 0; n < 3; n++) {
      expect(db.getSync(key(hot))?.toString()).toBe(value(hot));
      reads.push(stats());
    }
    const delta = (n: number, k: keyof Stats): number => reads[n + 1]![k] - reads[n]![k];
    // First read: from the file, declined by the full cache.
    expect([delta(0, 'blocksRead'), delta(0, 'blockCacheDeclined'), delta(0, 'blockCacheHits')]).toEqual([1, 1, 0]);
    // Second: from the file again, now taken into the cache.
    expect([delta(1, 'blocksRead'), delta(1, 'blockCacheDeclined'), delta(1, 'blockCacheHits')]).toEqual([1, 0, 0]);
    // Third: a cache hit.
    expect([delta(2, 'blocksRead'), delta(2, 'blockCacheDeclined'), delta(2, 'blockCacheHits')]).toEqual([0, 0, 1]);
    // Neighbours of a declined block read through the scratch answer right, interleaved.
    for (let i = 3000; i < 6000; i += 13) {
      expect(db.getSync(key(i))?.toString()).toBe(value(i));
      expect(db.getSync(key(5999 - (i - 3000)))?.toString()).toBe(value(5999 - (i - 3000)));
    }
    await db.close();
  });
});
