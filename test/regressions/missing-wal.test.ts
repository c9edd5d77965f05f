/**
 * Found by the corruption campaign (test/db/corruption-db.test.ts, "every file removed", any
 * seed): a database whose live WAL was missing opened as if it were empty — every acknowledged,
 * synced write it held gone, under either paranoidChecks, with nothing in `sievekv.stats` or
 * the open's result to say so.
 *
 * A crash cannot leave this state: the WAL is created and its directory synced before the
 * MANIFEST edit that names it (the recovered log number) is written, and it is deleted only after
 * a later edit is synced. A WAL the MANIFEST names but the directory lacks is CORRUPTION, as a
 * missing table already is (RocksDB's track_and_verify_wals_in_manifest does the same check).
 */
import { expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { isSieveError } from '../../src/errors.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';

for (const paranoidChecks of [true, false]) {
  it(`the live WAL removed, paranoidChecks ${paranoidChecks}: CORRUPTION, not an empty database`, async () => {
    const fs = new MemFileSystem();
    const db = await DB.open('/db', { fs });
    for (let i = 0; i < 10; i++) await db.put(`key-${i}`, `value-${i}`, { sync: true });
    await db.close();
    const wal = fs.list('/db').find((n) => n.endsWith('.log'))!;
    fs.remove(`/db/${wal}`);
    let reopened: DB;
    try {
      reopened = await DB.open('/db', { fs, paranoidChecks });
    } catch (err) {
      expect(isSieveError(err, 'CORRUPTION'), String(err)).toBe(true);
      return;
    }
    try {
      // Before 88bdd05: undefined, silently.
      expect((await reopened.get('key-0'))?.toString()).toBe('value-0');
    } finally {
      await reopened.close();
    }
  });
}
