/**
 * The chained batch (`db.batch()` with no arguments): operations encode as they are queued, write
 * once atomically (async or sync twin), then every call is CLOSED; the same limits and errors as
 * the array form.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { isSieveError } from '../../src/errors.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';

describe('db.batch() chained', () => {
  it('writes what the array form writes, for any operations (and reopens the same)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ del: fc.boolean(), key: fc.string({ maxLength: 3 }), value: fc.string({ maxLength: 8 }) }), { maxLength: 40 }),
        fc.boolean(),
        async (ops, sync) => {
          const a = await DB.open('/a', { fs: new MemFileSystem() });
          const fsB = new MemFileSystem();
          const b = await DB.open('/b', { fs: fsB });
          await a.batch(ops.map((o) => (o.del ? { type: 'del', key: o.key } : { type: 'put', key: o.key, value: o.value })));
          const chained = b.batch();
          for (const o of ops) (o.del ? chained.del(o.key) : chained.put(o.key, o.value));
          expect(chained.length).toBe(ops.length);
          if (sync) chained.writeSync();
          else await chained.write({ sync: true });
          const entries = async (db: DB) => {
            const out: string[] = [];
            for await (const [k, v] of db.iterator()) out.push(`${k}=${v}`);
            return out;
          };
          expect(await entries(b)).toEqual(await entries(a));
          await b.close();
          const again = await DB.open('/b', { fs: fsB });
          expect(await entries(again)).toEqual(await entries(a));
          await Promise.all([a.close(), again.close()]);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('is written once: afterwards, and after close(), every call is CLOSED; clear() empties it', async () => {
    const db = await DB.open('/db', { fs: new MemFileSystem() });
    const batch = db.batch().put('a', '1').put('b', '2');
    batch.clear();
    expect(batch.length).toBe(0);
    await batch.put('c', '3').write();
    expect(db.getSync('a')).toBeUndefined();
    expect(db.getSync('c')?.toString()).toBe('3');
    for (const call of [() => batch.put('d', '4'), () => batch.del('c'), () => batch.writeSync(), () => batch.length]) {
      expect(call).toThrow(expect.objectContaining({ code: 'CLOSED' }));
    }
    await expect(batch.write()).rejects.toMatchObject({ code: 'CLOSED' });
    const discarded = db.batch().put('e', '5');
    await discarded.close();
    expect(() => discarded.put('f', '6')).toThrow(expect.objectContaining({ code: 'CLOSED' }));
    expect(db.getSync('e')).toBeUndefined();
    await db.close();
    expect(() => db.batch()).toThrow(expect.objectContaining({ code: 'CLOSED' }));
  });

  it('refuses a bad key or value and an operation past maxBatchSize without queuing it', async () => {
    const db = await DB.open('/db', { fs: new MemFileSystem(), maxBatchSize: 4096 });
    const batch = db.batch().put('a', 'x'.repeat(3000));
    let err: unknown;
    try {
      batch.put('b', 'y'.repeat(2000));
    } catch (e) {
      err = e;
    }
    expect(isSieveError(err, 'INVALID_ARGUMENT')).toBe(true);
    expect(() => batch.put(42 as unknown as string, 'v')).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    expect(batch.length).toBe(1);
    await batch.write();
    expect(db.getSync('a')?.length).toBe(3000);
    expect(db.getSync('b')).toBeUndefined();
    await db.close();
  });
});
