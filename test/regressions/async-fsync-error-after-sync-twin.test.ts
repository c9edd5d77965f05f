/**
 * Issue 9, item 7: when a sync twin finished a group whose asynchronous fdatasync was in flight,
 * a failure of that fdatasync was swallowed: the group's writers resolved and nothing was latched.
 * A failed fdatasync is always reported to the writers it covers, and latched.
 */
import { expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { ioError, isSieveError } from '../../src/errors.js';
import type { WritableFile } from '../../src/fs/file-system.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';

/** WAL files whose asynchronous fdatasync fails (EIO) once armed; the blocking one succeeds. */
class FailingAsyncSync extends MemFileSystem {
  armed = false;
  override createWritable(path: string): WritableFile {
    const file = super.createWritable(path);
    if (!path.endsWith('.log')) return file;
    const fs = this;
    return {
      get size() {
        return file.size;
      },
      append: (data, start, end) => file.append(data, start, end),
      sync: () => file.sync(),
      async syncAsync() {
        await new Promise((r) => setTimeout(r, 5));
        if (fs.armed) throw ioError('fdatasync failed: EIO', { file: path, cause: Object.assign(new Error('EIO'), { code: 'EIO' }) });
        return file.syncAsync();
      },
      close: () => file.close(),
    };
  }
}

it('a failed async fdatasync rejects the writers it covered and is latched, even after a sync twin made them durable', async () => {
  const fs = new FailingAsyncSync();
  const db = await DB.open('/db', { fs });
  fs.armed = true;
  const first = db.put('a', '1', { sync: true });
  const second = db.batch([{ type: 'put', key: 'b', value: '2' }], { sync: true });
  db.putSync('c', '3'); // finishes the group in flight with a blocking fdatasync, then writes
  const outcomes = await Promise.allSettled([first, second]);
  expect(outcomes[0]!.status).toBe('rejected');
  expect(isSieveError((outcomes[0] as PromiseRejectedResult).reason, 'IO_ERROR')).toBe(true);
  // The batch queued behind it was written by the twin with a blocking fdatasync that succeeded.
  expect(outcomes[1]!.status).toBe('fulfilled');
  // Latched: every later write fails with it; reads go on.
  await expect(db.put('d', '4')).rejects.toMatchObject({ code: 'IO_ERROR' });
  expect(() => db.putSync('e', '5')).toThrow(/EIO|fdatasync/);
  expect(db.getSync('c')?.toString()).toBe('3');
  await db.close();
});

it('the writers of a group settle in order and all get a WAL error', async () => {
  const fs = new FailingAsyncSync();
  const db = await DB.open('/db', { fs });
  fs.armed = true;
  const writes = Array.from({ length: 5 }, (_, i) => db.put(`k${i}`, `v${i}`, { sync: true }));
  const outcomes = await Promise.allSettled(writes);
  for (const o of outcomes) expect(o.status).toBe('rejected');
  await db.close();
});
