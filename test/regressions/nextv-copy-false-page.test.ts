/**
 * Regression: `nextv(n)` with `copy: false` returned views of the iterator's reused key buffer (and,
 * in reverse, of its saved value), so every entry of a page showed the last key read. Found by the
 * block recycling test (test/db/block-recycling.test.ts). A page now lives in a buffer of its own,
 * valid until the next call as the README says.
 */
import { describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';

describe('nextv with copy: false', () => {
  it('every entry of a page is its own, forward and reverse, with and without values, memtable and tables', async () => {
    const db = await DB.open('/db', { fs: new MemFileSystem(), writeBufferSize: 16 * 1024 });
    const key = (i: number): string => `key${String(i).padStart(5, '0')}`;
    for (let i = 0; i < 2000; i++) db.putSync(key(i), `value-${i}-`.repeat(1 + (i % 5)));
    for (const reverse of [false, true]) {
      for (const values of [true, false]) {
        const copied = db.iterator({ reverse, values }).nextvSync(700).map(([k, v]) => `${k.toString()}=${v.toString()}`);
        const it = db.iterator({ reverse, values, copy: false });
        const first = it.nextvSync(700).map(([k, v]) => `${k.toString()}=${v.toString()}`);
        expect(first).toEqual(copied);
        const second = it.nextvSync(5).map(([k]) => k.toString());
        expect(second).toEqual(db.iterator({ reverse, values }).nextvSync(705).slice(700).map(([k]) => k.toString()));
        it.close();
      }
    }
    await db.close();
  });
});
