/**
 * Issue 9, items 8 and 11: misuse is a clear INVALID_ARGUMENT, raised before anything is written.
 */
import { describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { isSieveError } from '../../src/errors.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import type { RegionRouter } from '../../src/shard/region-router.js';

function invalid(fn: () => unknown): void {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(isSieveError(err, 'INVALID_ARGUMENT'), String(err)).toBe(true);
}

describe('misuse', () => {
  it('a router that is not a RegionRouter', () => {
    const fs = new MemFileSystem();
    for (const router of [{}, { name: 'x', regions: [0, 1] }, { name: 'x', regions: [], regionOf: () => 0 }, { name: 'x', regions: [1, 2], regionOf: () => 1 }, 42]) {
      invalid(() => DB.openSync('/db', { fs, router: router as unknown as RegionRouter }));
    }
  });

  it('a router that sends a key to no region: nothing of the batch is written', async () => {
    const fs = new MemFileSystem();
    const bad: RegionRouter = { name: 'bad', regions: [0, 1], regionOf: (key) => (key[0] === 0x7a ? 7 : key.length % 2) };
    const db = await DB.open('/db', { fs, router: bad });
    await expect(db.batch([{ type: 'put', key: 'a', value: '1' }, { type: 'put', key: 'zz', value: '2' }])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    invalid(() => db.putSync('z', '1'));
    invalid(() => db.batchSync([{ type: 'put', key: 'b', value: '1' }, { type: 'del', key: 'z' }]));
    expect(db.getSync('a')).toBeUndefined();
    expect(db.getSync('b')).toBeUndefined();
    await db.put('c', '3'); // the database goes on
    await db.close();
    const again = await DB.open('/db', { fs, router: bad });
    expect(again.getSync('a')).toBeUndefined();
    expect(again.getSync('c')?.toString()).toBe('3');
    await again.close();
  });

  it('a snapshot of another database', async () => {
    const a = await DB.open('/a', { fs: new MemFileSystem() });
    const b = await DB.open('/b', { fs: new MemFileSystem() });
    await a.put('k', 'a');
    await b.put('k', 'b');
    const snap = a.snapshot();
    invalid(() => b.getSync('k', { snapshot: snap }));
    invalid(() => b.iterator({ snapshot: snap }));
    expect(a.getSync('k', { snapshot: snap })?.toString()).toBe('a');
    snap.release();
    await a.close();
    await b.close();
  });

  it('unknown iterator options and compression: null', async () => {
    const fs = new MemFileSystem();
    invalid(() => DB.openSync('/db', { fs, compression: null as unknown as 'lz4' }));
    invalid(() => DB.openSync('/db', { fs, compression: 'toString' as unknown as 'lz4' }));
    const db = await DB.open('/db', { fs });
    invalid(() => db.iterator({ lessThan: 'b' } as never));
    await db.close();
  });
});

describe('batch size limit (maxBatchSize)', () => {
  it('a batch or a value over the limit is refused before anything is written', async () => {
    const fs = new MemFileSystem();
    const db = await DB.open('/db', { fs, maxBatchSize: 64 * 1024 });
    const big = new Uint8Array(40 * 1024);
    await expect(db.batch([{ type: 'put', key: 'a', value: big }, { type: 'put', key: 'b', value: big }])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    invalid(() => db.putSync('c', new Uint8Array(70 * 1024)));
    await expect(db.put('c', new Uint8Array(70 * 1024))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(db.getSync('a')).toBeUndefined();
    await db.put('d', big); // under the limit
    expect(db.getSync('d')?.length).toBe(big.length);
    await db.close();
    invalid(() => DB.openSync('/db', { fs, maxBatchSize: 10 }));
  });
});
