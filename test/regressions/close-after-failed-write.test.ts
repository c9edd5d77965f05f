/**
 * Found by the n-th-call fault test (test/db/faults-nth-call.test.ts): when a synced write's WAL
 * append failed, the writer queue's leader finished without ever awaiting, before its promise was
 * stored; the queue then held a settled leader forever and `db.close()` spun on it at 100% CPU.
 */
import { expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { FaultyFileSystem } from '../../src/fs/faulty-fs.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';

it('close() returns after a synced write failed at its WAL append; the write is rejected and latched', async () => {
  const fs = new FaultyFileSystem(new MemFileSystem());
  const db = await DB.open('/db', { fs });
  await db.put('before', '1', { sync: true });
  fs.inject({ ops: ['append'], path: /\.log$/ });
  await expect(db.put('a', 'b', { sync: true })).rejects.toMatchObject({ code: 'IO_ERROR' });
  await expect(db.put('c', 'd')).rejects.toMatchObject({ code: 'IO_ERROR' });
  await db.close();
  expect(db.closed).toBe(true);
});
