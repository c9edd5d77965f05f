/**
 * Recycled block bytes (format/byte-arena.ts, Block.recyclable): the block cache gives back the
 * bytes of blocks only point lookups used, and the next block read takes them. Nothing may read
 * them after: with recycled bytes poisoned (0xa5), gets, getMany, iterators held open across many
 * evictions, reverse scans and `copy: false` pages keep answering what a Map of the same writes
 * answers, under a block cache a few blocks large.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { allocateBytes, isLastCarved, recycleBytes, setRecycledBytesPoison } from '../../src/format/byte-arena.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { rng, testSeed } from '../support/seed.js';

beforeAll(() => setRecycledBytesPoison(true));
afterAll(() => setRecycledBytesPoison(false));

describe('the byte arena', () => {
  it('hands carved bytes out once, and recycled bytes again to a length of their size class', () => {
    const a = allocateBytes(4100);
    expect(isLastCarved(a)).toBe(true);
    const b = allocateBytes(4100);
    expect(a.buffer === b.buffer && a.byteOffset === b.byteOffset).toBe(false);
    a.fill(1);
    b.fill(2);
    expect(a.every((x) => x === 1)).toBe(true); // no overlap
    recycleBytes(a);
    expect(a[0]).toBe(0xa5); // poisoned
    const c = allocateBytes(4500); // same 512-byte class as 4100
    expect(c.buffer === a.buffer && c.byteOffset === a.byteOffset).toBe(true);
    expect(c.length).toBe(4500);
    c.fill(3);
    expect(b.every((x) => x === 2)).toBe(true); // the reserved class size kept it off b
  });

  it('does not recycle short or oversized arrays, nor report them as carved in a class', () => {
    const small = allocateBytes(64);
    expect(isLastCarved(small)).toBe(false);
    const big = allocateBytes(64 * 1024);
    expect(isLastCarved(big)).toBe(false);
    recycleBytes(small);
    recycleBytes(big);
    const next = allocateBytes(64);
    expect(next.buffer === small.buffer && next.byteOffset === small.byteOffset).toBe(false);
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
