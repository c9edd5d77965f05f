/**
 * Issue 9, item 4: when the directory fsync after CURRENT's rename failed (EIO), the cleanup
 * removed the new MANIFEST that CURRENT already named, and every later open failed. Cleanup after
 * a failed install never removes a file CURRENT may name.
 */
import { expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { ioError, isSieveError } from '../../src/errors.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';

/** Fails the directory sync that follows the next rename onto CURRENT, once. */
class FailSyncAfterCurrent extends MemFileSystem {
  armed = false;
  #renamed = false;
  override rename(from: string, to: string): void {
    super.rename(from, to);
    if (this.armed && to.endsWith('/CURRENT')) this.#renamed = true;
  }
  override syncDir(dir: string): void {
    if (this.#renamed) {
      this.#renamed = false;
      this.armed = false;
      const cause = Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
      throw ioError('syncDir failed: EIO', { file: dir, cause });
    }
    super.syncDir(dir);
  }
}

it('an EIO from the directory sync after CURRENT is renamed (at open) leaves a database that opens, with every write', async () => {
  const fs = new FailSyncAfterCurrent();
  let db = await DB.open('/db', { fs });
  for (let i = 0; i < 50; i++) await db.put(`k${i}`, `v${i}`, { sync: true });
  await db.close();
  fs.armed = true;
  let err: unknown;
  try {
    await DB.open('/db', { fs });
  } catch (e) {
    err = e;
  }
  expect(isSieveError(err, 'IO_ERROR'), String(err)).toBe(true);
  const current = new TextDecoder().decode(fs.readFile('/db/CURRENT')).trim();
  expect(fs.exists(`/db/${current}`)).toBe(true);
  // Reopen both on the live file system and on what a power cut would leave.
  for (const target of [fs, fs.crashClone()]) {
    db = await DB.open('/db', { fs: target });
    for (let i = 0; i < 50; i++) expect(db.getSync(`k${i}`)?.toString()).toBe(`v${i}`);
    await db.close();
  }
});
