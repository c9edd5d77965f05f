/**
 * Found by the model test (test/model/db-model.test.ts), shrunk: an empty batch written with
 * `sync: true` went through group commit, which published `lastSequence = sequence + count - 1`
 * for a group that had taken no sequence numbers, i.e. -1 on a fresh database. Every later
 * read at "the newest state" then read at sequence -1 (iterators threw INVALID_ARGUMENT).
 */
import { describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';

describe('an empty synced batch', () => {
  it('takes no sequence number and leaves reads working', async () => {
    const fs = new MemFileSystem();
    const db = await DB.open('/db', { fs, writeBufferSize: 1024 });
    await db.batch([], { sync: true });
    expect([...db.iterator()]).toEqual([]);
    await db.put('a', '1', { sync: true });
    await Promise.all([db.batch([], { sync: true }), db.put('b', '2', { sync: true }), db.batch([], { sync: true })]);
    expect([...db.iterator()].map(([k, v]) => `${k}=${v}`)).toEqual(['a=1', 'b=2']);
    expect(JSON.parse(db.getProperty('sievekv.stats')!).lastSequence).toBe(2);
    await db.close();
    const again = await DB.open('/db', { fs });
    expect([...again.iterator()].map(([k, v]) => `${k}=${v}`)).toEqual(['a=1', 'b=2']);
    await again.put('c', '3');
    expect(again.getSync('c')?.toString()).toBe('3');
    await again.close();
  });
});
