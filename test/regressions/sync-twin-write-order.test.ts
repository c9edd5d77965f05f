/**
 * Found by the model test's `concurrent` command (and api.test.ts), shrunk: a synchronous write
 * (`putSync`, `delSync`, `batchSync`) issued while async writes were queued behind a group waiting
 * for its fdatasync finished that group, then committed itself before the queued writes, which
 * were called earlier. Here the queued put of ffff landed after the delSync of ffff, so the key
 * the caller deleted last came back.
 */
import { describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';

describe('a synchronous write among pending async writes', () => {
  it('applies after every write called before it', async () => {
    const db = await DB.open('/db', { fs: new MemFileSystem(), writeBufferSize: 1024 });
    const key = Buffer.from([0xff, 0xff]);
    const first = db.del(Buffer.alloc(0), { sync: true }); // a group now waits for its fdatasync
    const queued = db.batch([{ type: 'put', key, value: Buffer.alloc(0) }]); // queued behind it
    db.delSync(key);
    expect(db.getSync(key)).toBeUndefined();
    await Promise.all([first, queued]);
    expect(db.getSync(key)).toBeUndefined();
    expect([...db.iterator()]).toEqual([]);
    await db.close();
  });
});
