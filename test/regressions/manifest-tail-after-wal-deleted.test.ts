/**
 * Found by the corruption campaign (test/db/corruption-db.test.ts: the MANIFEST cut sweep at the
 * default seed 1592598566, sharded image; also `npm run corruption-campaign -- --seed 20260101
 * --case 5291`, one flipped bit in the last record's length). Cutting the MANIFEST's last record
 * short — a truncation, or a length that runs past the end of the file — was taken for a torn
 * tail and the edit dropped quietly. When that edit was a flush, its WAL had already been deleted
 * (a WAL is deleted only after the edit that flushed it is synced), so the flushed writes were
 * gone: the open succeeded and acknowledged, synced writes read as their older values or as
 * absent, under either paranoidChecks, and the orphaned table was deleted as obsolete.
 *
 * A crash cannot leave this state: the WAL at the recovered log number must still exist (it is
 * created, and its directory synced, before any edit names it, and deleted only after a later
 * edit is synced). A MANIFEST whose log number names a missing WAL lost an edit: CORRUPTION.
 */
import { expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { isSieveError } from '../../src/errors.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';

async function flushedThenClosed(): Promise<{ fs: MemFileSystem; manifest: string }> {
  const fs = new MemFileSystem();
  const db = await DB.open('/db', { fs });
  await db.put('old', 'value-in-a-table', { sync: true });
  await db.compactRange(); // a table holds 'old'
  await db.put('old', 'overwritten', { sync: true });
  await db.put('new', 'only-in-the-last-flush', { sync: true });
  await db.compactRange('zzzz', 'zzzz'); // a flush only: its edit is the MANIFEST's last record; the WAL is deleted
  await db.close();
  const manifest = `/db/${fs.list('/db').find((n) => n.startsWith('MANIFEST-'))!}`;
  return { fs, manifest };
}

function rewrite(fs: MemFileSystem, path: string, bytes: Uint8Array): void {
  const f = fs.createWritable(path);
  f.append(bytes);
  f.sync();
  f.close();
}

/** The offset of the MANIFEST's last record (walking the 7-byte headers; one 32 KiB block). */
function lastRecordOffset(bytes: Uint8Array): number {
  let pos = 0;
  let last = 0;
  while (pos + 7 <= bytes.length) {
    last = pos;
    pos += 7 + (bytes[pos + 4]! | (bytes[pos + 5]! << 8));
  }
  return last;
}

for (const [what, damage] of [
  ['cut one byte short', (b: Uint8Array) => b.slice(0, b.length - 1)],
  [
    'its length one more than the bytes left',
    (b: Uint8Array) => {
      const out = b.slice();
      out[lastRecordOffset(b) + 4]! += 1; // the record now runs one byte past the end of the file
      return out;
    },
  ],
] as const) {
  for (const paranoidChecks of [true, false]) {
    it(`the MANIFEST's last record (a flush whose WAL is gone) ${what}, paranoidChecks ${paranoidChecks}: CORRUPTION or every write`, async () => {
      const { fs, manifest } = await flushedThenClosed();
      rewrite(fs, manifest, damage(fs.readFile(manifest)));
      let db: DB;
      try {
        db = await DB.open('/db', { fs, paranoidChecks });
      } catch (err) {
        expect(isSieveError(err, 'CORRUPTION'), String(err)).toBe(true);
        return;
      }
      try {
        // Before 88bdd05: 'value-in-a-table' and undefined, silently.
        expect((await db.get('old'))?.toString()).toBe('overwritten');
        expect((await db.get('new'))?.toString()).toBe('only-in-the-last-flush');
      } finally {
        await db.close();
      }
    });
  }
}
