/**
 * SieveLevel beyond abstract-level's suite: sievekv's options pass through (and only they), the
 * manifest tells the truth, the additional methods (approximateSize, compactRange, getProperty),
 * a second open of a directory is LOCKED, Level's seek outside the range, the same bytes as the
 * plain DB API, and the `sievekv/level` subpath export.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { SieveLevel } from '../../src/level/index.js';

const root = mkdtempSync(join(tmpdir(), 'sievekv-level-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const place = (): string => join(root, `db-${n++}`);

describe('SieveLevel', () => {
  it("passes sievekv's options through to the engine, ignores what neither knows, and fails the open on a bad value", async () => {
    const fs = new MemFileSystem();
    const db = new SieveLevel('/db', { fs, compression: 'none', writeBufferSize: 1024, userland: 1 } as never);
    await db.batch(Array.from({ length: 100 }, (_, i) => ({ type: 'put' as const, key: `k${i}`, value: 'v'.repeat(50) })));
    await db.compactRange('k', 'l');
    const stats = JSON.parse(db.getProperty('sievekv.stats')!) as { flushes: number };
    expect(stats.flushes).toBeGreaterThan(0); // a 1 KiB memtable: the option reached the engine
    expect(fs.list('/db').some((f) => f.endsWith('.ldb'))).toBe(true); // and the file system
    await db.close();

    const bad = new SieveLevel(place(), { writeBufferSize: 3 });
    const err = await bad.open().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'LEVEL_DATABASE_NOT_OPEN', cause: { code: 'INVALID_ARGUMENT' } });
    expect(() => new SieveLevel('')).toThrow(TypeError);
  });

  it('has a truthful manifest', async () => {
    const db = new SieveLevel(place());
    const s = db.supports;
    expect([s.has, (s as unknown as { getSync: boolean }).getSync, s.explicitSnapshots, s.implicitSnapshots, s.seek, s.createIfMissing, s.errorIfExists, s.permanence, s.deferredOpen]).toEqual(
      Array(9).fill(true),
    );
    expect(s.additionalMethods).toEqual({ approximateSize: true, compactRange: true });
    expect(s.signals).toEqual({ iterators: true });
    expect(s.encodings).toMatchObject({ utf8: true, buffer: true, view: true, json: true });
    await db.put('a', '1');
    expect(await db.has('a')).toBe(true);
    expect(db.getSync('a')).toBe('1');
    const snap = db.snapshot();
    await db.put('a', '2');
    expect(await db.get('a', { snapshot: snap })).toBe('1');
    await snap.close();
    const ac = new AbortController();
    const it = db.iterator({ signal: ac.signal });
    ac.abort();
    await expect(it.next()).rejects.toMatchObject({ code: 'LEVEL_ABORTED' });
    await it.close();
    await db.close();
  });

  it('approximateSize and compactRange take keys in the key encoding, defer while opening, need an open database', async () => {
    const db = new SieveLevel<number, string>(place(), { keyEncoding: 'json', compression: 'none' });
    const pending = db.approximateSize(100, 200); // deferred: runs once open, before the writes
    // json keys of 100…2099: all of four digits but 100…999, all sorting between 100 and 999.
    await db.batch(Array.from({ length: 2000 }, (_, i) => ({ type: 'put' as const, key: 100 + i, value: 'x'.repeat(100) })));
    expect(await pending).toBe(0);
    await db.compactRange(100, 999);
    const all = await db.approximateSize(100, 999);
    const some = await db.approximateSize(1000, 1100); // "1000" … "1099", 100 keys of 2000
    expect(all).toBeGreaterThan(200_000);
    expect(some / all).toBeGreaterThan(0.03);
    expect(some / all).toBeLessThan(0.08);
    await expect((db.approximateSize as (a: number) => Promise<number>)(1)).rejects.toThrow(TypeError);
    await db.close();
    await expect(db.approximateSize(0, 1)).rejects.toMatchObject({ code: 'LEVEL_DATABASE_NOT_OPEN' });
    await expect(db.compactRange(0, 1)).rejects.toMatchObject({ code: 'LEVEL_DATABASE_NOT_OPEN' });
    expect(() => db.getProperty('sievekv.stats')).toThrow(expect.objectContaining({ code: 'LEVEL_DATABASE_NOT_OPEN' }));
  });

  it('a second open of the same directory fails with LOCKED as the cause', async () => {
    const location = place();
    const a = new SieveLevel(location);
    await a.open();
    const b = new SieveLevel(location);
    await expect(b.open()).rejects.toMatchObject({ code: 'LEVEL_DATABASE_NOT_OPEN', cause: { code: 'LOCKED' } });
    await a.close();
    await b.open();
    await b.close();
  });

  it("seek follows Level: a target outside the range ends the iterator until the next seek", async () => {
    const db = new SieveLevel(place());
    await db.batch(['1', '2', '3', '4', '5', '6', '7'].map((k) => ({ type: 'put' as const, key: k, value: k })));
    const it = db.keys({ gt: '2', lt: '6' });
    it.seek('1'); // below the range: sievekv alone would go to 3
    expect(await it.next()).toBeUndefined();
    it.seek('4');
    expect(await it.nextv(10)).toEqual(['4', '5']);
    it.seek('9');
    expect(await it.all()).toEqual([]);
    const rev = db.keys({ gte: '2', lte: '6', reverse: true });
    rev.seek('7');
    expect(await rev.next()).toBeUndefined();
    rev.seek('3');
    expect(await rev.all()).toEqual(['3', '2']);
    // nextv fetches as many as asked in one call
    expect(await db.iterator().nextv(100)).toHaveLength(7);
    await db.close();
  });

  it('stores the same bytes as the DB API: one reads what the other wrote', async () => {
    const location = place();
    const level = new SieveLevel<string, Buffer>(location, { valueEncoding: 'buffer' });
    await level.put('é', Buffer.from([0, 255]));
    await level.sublevel<string, Buffer>('s', { valueEncoding: 'buffer' }).put('k', Buffer.from('in a sublevel'));
    await level.close();
    const db = await DB.open(location);
    expect([...(await db.get('é'))!]).toEqual([0, 255]);
    expect((await db.get('!s!k'))!.toString()).toBe('in a sublevel');
    await db.put(Buffer.from([0x7a]), 'from DB');
    await db.close();
    const again = new SieveLevel(location);
    expect(await again.get('z')).toBe('from DB');
    await again.close();
  });

  it("is the package's sievekv/level subpath export (built from src/level/index.ts)", () => {
    const pkg = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'package.json'), 'utf8')) as {
      exports: Record<string, { types: string; import: string }>;
      dependencies: Record<string, string>;
    };
    // tsconfig.build.json compiles the repository root into dist/: src/level/index.ts → dist/src/level/index.js
    expect(pkg.exports['./level']).toEqual({ types: './dist/src/level/index.d.ts', import: './dist/src/level/index.js' });
    expect(pkg.dependencies['abstract-level']).toMatch(/^\^3\./);
  });
});
