/**
 * Issue 9, item 3: with paranoidChecks off, a damaged MANIFEST record was skipped; the tables that
 * edit added then looked obsolete and were deleted (one flipped bit: 9 tables and 10 of 60 keys
 * gone, and the open "succeeded"). A damaged MANIFEST is CORRUPTION whatever paranoidChecks says,
 * and nothing is deleted.
 */
import { expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { isSieveError } from '../../src/errors.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';

it('a flipped bit in any MANIFEST record: CORRUPTION paranoid or not, every file kept', async () => {
  const fs = new MemFileSystem();
  const db = await DB.open('/db', { fs, writeBufferSize: 1024 });
  for (let i = 0; i < 60; i++) {
    await db.put(`key-${String(i).padStart(2, '0')}`, 'v'.repeat(100));
  }
  await db.close();
  const current = new TextDecoder().decode(fs.readFile('/db/CURRENT')).trim();
  const manifest = fs.readFile(`/db/${current}`);
  expect(manifest.length).toBeGreaterThan(100);
  // Flip a bit in several records' payloads (past the 7-byte header of the first record).
  for (const at of [10, Math.floor(manifest.length / 2), manifest.length - 3]) {
    const damaged = manifest.slice();
    damaged[at]! ^= 0x08;
    const file = fs.createWritable(`/db/${current}`);
    file.append(damaged);
    file.sync();
    file.close();
    const names = fs.list('/db').filter((n) => n !== 'LOG' && n !== 'LOG.old').sort();
    for (const paranoidChecks of [true, false]) {
      let err: unknown;
      try {
        await DB.open('/db', { fs, paranoidChecks });
      } catch (e) {
        err = e;
      }
      expect(isSieveError(err, 'CORRUPTION'), `offset ${at}: ${String(err)}`).toBe(true);
      expect(fs.list('/db').filter((n) => n !== 'LOG' && n !== 'LOG.old').sort()).toEqual(names);
    }
  }
  const file = fs.createWritable(`/db/${current}`);
  file.append(manifest);
  file.sync();
  file.close();
  const again = await DB.open('/db', { fs });
  for (let i = 0; i < 60; i++) expect(again.getSync(`key-${String(i).padStart(2, '0')}`)?.length).toBe(100);
  await again.close();
});
