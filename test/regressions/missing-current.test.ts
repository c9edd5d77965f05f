/**
 * Issue 9, item 2: a directory that holds tables, WALs or a MANIFEST but no CURRENT was taken for
 * an empty directory: the default open (createIfMissing) made a fresh database and deleted every
 * table. It is CORRUPTION now, and nothing is touched.
 */
import { expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { isSieveError } from '../../src/errors.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';

it('a missing CURRENT is CORRUPTION naming what the directory holds; no file is removed or changed', async () => {
  const fs = new MemFileSystem();
  const db = await DB.open('/db', { fs, writeBufferSize: 4096 });
  for (let i = 0; i < 400; i++) await db.put(`key-${i}`, `value-${i}`.padEnd(40, '.'));
  await db.close();
  fs.remove('/db/CURRENT');
  const before = new Map(fs.list('/db').filter((n) => n !== 'LOG' && n !== 'LOG.old').map((n) => [n, fs.readFile(`/db/${n}`)]));
  const tables = [...before.keys()].filter((n) => n.endsWith('.ldb')).length;
  expect(tables).toBeGreaterThan(1);
  for (const options of [{}, { createIfMissing: false }, { paranoidChecks: false }]) {
    let err: unknown;
    try {
      await DB.open('/db', { fs, ...options });
    } catch (e) {
      err = e;
    }
    expect(isSieveError(err, 'CORRUPTION'), String(err)).toBe(true);
    expect((err as Error).message).toContain(`CURRENT is missing; the directory holds ${tables} tables`);
    expect((err as Error).message).toContain('MANIFEST');
    const after = fs.list('/db').filter((n) => n !== 'LOG' && n !== 'LOG.old');
    expect(after.sort()).toEqual([...before.keys()].sort());
    for (const [name, bytes] of before) expect(Buffer.compare(fs.readFile(`/db/${name}`), bytes), name).toBe(0);
  }
});

it('what a crash while creating a database leaves (the first MANIFEST, no CURRENT) is still a new database', async () => {
  const fs = new MemFileSystem();
  fs.mkdir('/db');
  const f = fs.createWritable('/db/MANIFEST-000001');
  f.append(new Uint8Array([1, 2, 3]));
  f.close();
  const db = await DB.open('/db', { fs });
  await db.put('a', 'b');
  expect(db.getSync('a')?.toString()).toBe('b');
  await db.close();
});
