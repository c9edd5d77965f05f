/**
 * Regression: async writes queued behind a wait (the memtable full while a flush is still
 * running) were committed meanwhile by a synchronous twin; the queue's drain then woke to an
 * empty queue and crashed (an unhandled rejection: "reading 'batch' of undefined"). Found by the
 * model test on MemFileSystem.
 */
import { describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';

describe('a sync twin while async writes wait for a flush', () => {
  it('commits the queued writes in order and the drain finds nothing left to do', async () => {
    // On MemFileSystem flushes run on this thread, deferred: with no event-loop turn between the
    // sync twins below, the first flush is still pending when the second memtable fills.
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const db = await DB.open('/db', { fs: new MemFileSystem(), writeBufferSize: 1024 });
    const big = 'x'.repeat(2000);
    db.putSync('a', big); // the memtable is now over the write buffer
    db.putSync('b', '1'); // switches memtables and starts a flush (deferred)
    db.putSync('c', big); // the new memtable is full too, the flush still pending
    const pending = [db.put('k', '1'), db.put('k', '2')]; // queued: they must wait for the flush
    db.putSync('k', '3'); // waits for the flush itself, commits the queue in call order, then its own
    await Promise.all(pending);
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve)); // let the drain wake
    process.off('unhandledRejection', onUnhandled);
    expect(unhandled).toEqual([]);
    expect(db.getSync('k')?.toString()).toBe('3');
    await db.put('k', '4');
    expect(db.getSync('k')?.toString()).toBe('4');
    await db.close();
  });
});
