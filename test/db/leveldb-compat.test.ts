/**
 * LevelDB, both ways: sievekv opens directories LevelDB made (tables on several levels, snappy and
 * uncompressed blocks, WAL tails to replay) and reads exactly what LevelDB recorded; LevelDB
 * (1.20, through classic-level) opens directories sievekv made and reads every key back.
 */
import { ClassicLevel } from 'classic-level';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { BloomFilterPolicy } from '../../src/filter/bloom.js';
import { fixturePath, readJsonLines } from '../support/fixtures.js';
import { rng } from '../support/seed.js';
import { testSeed } from '../support/seed.js';

const temp: string[] = [];
afterAll(() => {
  for (const d of temp) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sievekv-compat-'));
  temp.push(d);
  return d;
}

/** A copy of a fixture database (opening writes to the directory: never open the original). */
function copyFixture(name: string): string {
  const dir = join(tempDir(), name);
  cpSync(fixturePath(name), dir, { recursive: true });
  return dir;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

describe('sievekv reads LevelDB-made databases', () => {
  for (const name of ['ldb-small-nocomp', 'ldb-snappy-small', 'ldb-log-edges']) {
    it(`${name}: iteration equals expected.jsonl, every key reads back, deleted keys are missing`, async () => {
      const expected = readJsonLines<{ key: string; value: string }>(name, 'expected.jsonl');
      const deleted = readJsonLines<{ key: string }>(name, 'deleted.jsonl');
      const dir = copyFixture(name);
      const db = await DB.open(dir, { createIfMissing: false });
      try {
        const seen: { key: string; value: string }[] = [];
        for await (const [k, v] of db.iterator()) seen.push({ key: hex(k), value: hex(v) });
        expect(seen.length).toBe(expected.length);
        expect(seen).toEqual(expected);
        for (const { key, value } of expected) {
          const v = db.getSync(Buffer.from(key, 'hex'));
          expect(v === undefined ? undefined : hex(v)).toBe(value);
        }
        for (const { key } of deleted) expect(db.getSync(Buffer.from(key, 'hex'))).toBeUndefined();
        // Reverse iteration sees the same entries backwards.
        const backwards: string[] = [];
        for await (const [k] of db.iterator({ reverse: true })) backwards.push(hex(k));
        expect(backwards).toEqual(expected.map((e) => e.key).reverse());
      } finally {
        await db.close();
      }
      // Reopened (the replayed WAL is now a level-0 table), the contents are unchanged.
      const again = await DB.open(dir);
      try {
        let n = 0;
        for await (const [k, v] of again.iterator()) {
          expect({ key: hex(k), value: hex(v) }).toEqual(expected[n]);
          n++;
        }
        expect(n).toBe(expected.length);
      } finally {
        await again.close();
      }
    });
  }

  it('uses the Bloom filters LevelDB wrote to skip absent keys', async () => {
    const dir = copyFixture('ldb-small-nocomp');
    const db = await DB.open(dir);
    try {
      const next = rng(testSeed());
      for (let i = 0; i < 2000; i++) db.getSync(Buffer.from(`absent-${i}-${next()}`));
      const stats = JSON.parse(db.getProperty('sievekv.stats')!) as Record<string, number>;
      // LevelDB's 10 bits/key filters reject ≈99% of absent keys without a data block read.
      expect(stats.filterNegatives).toBeGreaterThan(0.95 * stats.filterChecks);
      expect(stats.filterChecks).toBeGreaterThan(1000);
    } finally {
      await db.close();
    }
  });
});

describe('LevelDB (classic-level) reads sievekv-made databases', () => {
  for (const compression of ['snappy', 'none'] as const) {
    it(`compression ${compression}: every key and value, deletions absent, in order`, async () => {
      const dir = join(tempDir(), `ours-${compression}`);
      const next = rng(testSeed() ^ 0x51ab);
      const model = new Map<string, string>();
      const db = await DB.open(dir, { compression, writeBufferSize: 64 * 1024, filterPolicy: new BloomFilterPolicy(10) });
      for (let i = 0; i < 6000; i++) {
        const key = Buffer.from(`k${Math.floor(next() * 4000)}-${'x'.repeat(Math.floor(next() * 20))}`);
        if (next() < 0.1) {
          await db.del(key);
          model.delete(key.toString('hex'));
        } else {
          const value = Buffer.alloc(Math.floor(next() * 300), i & 0xff);
          await db.put(key, value);
          model.set(key.toString('hex'), value.toString('hex'));
        }
      }
      await db.compactRange(); // flush: the data must be in tables too, not only in the WAL
      await db.put('after-flush', 'in the WAL only');
      model.set(Buffer.from('after-flush').toString('hex'), Buffer.from('in the WAL only').toString('hex'));
      await db.close();
      expect(readdirSync(dir).some((f) => f.endsWith('.ldb'))).toBe(true);
      expect(readdirSync(dir)).toContain('MEMTABLE'); // the close's memtable image, of the WAL

      const ldb = new ClassicLevel<Buffer, Buffer>(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer', createIfMissing: false });
      await ldb.open();
      try {
        const entries: [string, string][] = [];
        for await (const [k, v] of ldb.iterator()) entries.push([k.toString('hex'), v.toString('hex')]);
        const want = [...model.entries()].sort((a, b) => Buffer.compare(Buffer.from(a[0], 'hex'), Buffer.from(b[0], 'hex')));
        expect(entries.length).toBe(want.length);
        expect(entries).toEqual(want);
        for (const [k, v] of want.slice(0, 200)) expect((await ldb.get(Buffer.from(k, 'hex')))?.toString('hex')).toBe(v);
        // LevelDB moved the WAL into a table; it now overwrites the key the image holds.
        await ldb.put(Buffer.from('after-flush'), Buffer.from('rewritten by LevelDB'));
        model.set(Buffer.from('after-flush').toString('hex'), Buffer.from('rewritten by LevelDB').toString('hex'));
      } finally {
        await ldb.close();
      }
      // And after LevelDB has reopened (and rewritten) it, sievekv still reads it: the image of a
      // WAL LevelDB flushed is not used (it would show the key's older value).
      const back = await DB.open(dir);
      try {
        const entries: [string, string][] = [];
        for await (const [k, v] of back.iterator()) entries.push([k.toString('hex'), v.toString('hex')]);
        expect(entries).toEqual([...model.entries()].sort((a, b) => Buffer.compare(Buffer.from(a[0], 'hex'), Buffer.from(b[0], 'hex'))));
        expect(back.getSync('after-flush')?.toString()).toBe('rewritten by LevelDB');
      } finally {
        await back.close();
      }
    });
  }
});
