/**
 * Issue 9, item 9: an iterator made before `db.close()` went on reading after it, with the lock
 * released (another process may be writing by then). Closing the database ends every open
 * iterator; later calls on it are CLOSED.
 */
import { expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';

it('close() ends every open iterator: next, nextSync and seek are CLOSED afterwards', async () => {
  const fs = new MemFileSystem();
  const db = await DB.open('/db', { fs });
  for (let i = 0; i < 100; i++) await db.put(`k${String(i).padStart(3, '0')}`, `v${i}`);
  await db.compactRange();
  const started = db.iterator();
  expect(started.nextSync()?.[0].toString()).toBe('k000');
  const unstarted = db.iterator({ reverse: true });
  const finished = db.iterator({ limit: 1 });
  expect(finished.nextSync()).toBeDefined();
  expect(finished.nextSync()).toBeUndefined(); // at its limit before the close, but still open (issue 12)
  const closed = db.iterator();
  closed.close(); // closed by its user before the database
  await db.close();
  for (const it of [started, unstarted, finished]) {
    expect(() => it.nextSync()).toThrow(expect.objectContaining({ code: 'CLOSED' }));
    await expect(it.next()).rejects.toMatchObject({ code: 'CLOSED' });
    expect(() => it.seek('k050')).toThrow(expect.objectContaining({ code: 'CLOSED' }));
    it.close(); // still harmless
  }
  expect(closed.nextSync()).toBeUndefined();
  expect(() => closed.seek('k050')).toThrow(expect.objectContaining({ code: 'CLOSED' }));
});
