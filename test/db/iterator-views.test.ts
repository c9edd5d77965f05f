/**
 * `db.iterator({ copy: false })`: keys and values are views of the iterator's own buffers (the
 * memtable's, a block's, the iterator's key), valid until its next call. Copied at once, they are
 * exactly what the copying iterator yields, over memtables and tables, in both directions.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';

describe('iterator views (copy: false)', () => {
  it('copied at once, they are the copying iterator’s entries', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.nat({ max: 400 }), fc.string({ maxLength: 40 })), { minLength: 1, maxLength: 600 }), fc.boolean(), async (writes, reverse) => {
        const db = await DB.open('/db', { fs: new MemFileSystem(), writeBufferSize: 4096, maxFileSize: 4096, blockSize: 256 });
        for (const [k, v] of writes) db.putSync(`k${String(k).padStart(4, '0')}`, v);
        const copied = [...db.iterator({ reverse })].map(([k, v]) => `${k}=${v}`);
        const viewed: string[] = [];
        for (const [k, v] of db.iterator({ reverse, copy: false })) viewed.push(`${Buffer.from(k)}=${Buffer.from(v)}`);
        expect(viewed).toEqual(copied);
        await db.close();
      }),
      { numRuns: 25 },
    );
  });
});
