/**
 * Group commit: concurrent synced writers share WAL appends and fdatasyncs, keep the order they
 * were called in (also when a group is split at its byte limit), and a synced write is visible
 * only once durable.
 */
import { describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import type { WritableFile } from '../../src/fs/file-system.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';

/** Counts appends and syncs of WAL files. */
class CountingFileSystem extends MemFileSystem {
  walAppends = 0;
  walSyncs = 0;

  override createWritable(path: string): WritableFile {
    const file = super.createWritable(path);
    if (!path.endsWith('.log')) return file;
    const fs = this;
    return {
      get size() {
        return file.size;
      },
      append(data, start, end) {
        fs.walAppends++;
        file.append(data, start, end);
      },
      sync() {
        fs.walSyncs++;
        file.sync();
      },
      syncAsync() {
        fs.walSyncs++;
        return file.syncAsync();
      },
      close() {
        file.close();
      },
    };
  }
}

describe('group commit', () => {
  it('100 concurrent synced writes take a handful of WAL appends and syncs, not 100', async () => {
    const fs = new CountingFileSystem();
    const db = await DB.open('/db', { fs });
    const appends = fs.walAppends;
    const syncs = fs.walSyncs;
    await Promise.all(Array.from({ length: 100 }, (_, i) => db.put(`k${i}`, `v${i}`, { sync: true })));
    expect(fs.walAppends - appends).toBeLessThanOrEqual(5);
    expect(fs.walSyncs - syncs).toBeLessThanOrEqual(5);
    for (let i = 0; i < 100; i++) expect(db.getSync(`k${i}`)?.toString()).toBe(`v${i}`);
    await db.close();
  });

  it('keeps call order across groups split at the byte limit, synced or not', async () => {
    const fs = new MemFileSystem();
    const db = await DB.open('/db', { fs, writeBufferSize: 64 * 1024 });
    const big = (tag: string): string => tag.padEnd(300 * 1024, '.');
    const writes: Promise<void>[] = [];
    const expected = new Map<string, string>();
    for (let i = 0; i < 12; i++) {
      // Each batch overwrites the shared keys: whichever was called last must win.
      const value = i % 3 === 0 ? big(`w${i}`) : `w${i}`;
      writes.push(db.batch([{ type: 'put', key: 'shared', value }, { type: 'put', key: `own${i}`, value }], { sync: i % 2 === 0 }));
      expected.set('shared', value);
      expected.set(`own${i}`, value);
      if (i === 7) {
        writes.push(db.del('own3', { sync: true }));
        expected.delete('own3');
      }
    }
    await Promise.all(writes);
    const check = (d: DB): void => {
      for (const [k, v] of expected) expect(d.getSync(k)?.toString(), k).toBe(v);
      expect(d.getSync('own3')).toBeUndefined();
    };
    check(db);
    await db.close();
    const again = await DB.open('/db', { fs });
    check(again);
    await again.close();
  });

  it('a synced write becomes visible only once durable; an unsynced one at once', async () => {
    const db = await DB.open('/db', { fs: new MemFileSystem() });
    const synced = db.put('s', '1', { sync: true });
    expect(db.getSync('s')).toBeUndefined(); // its fdatasync has not been awaited yet
    await synced;
    expect(db.getSync('s')?.toString()).toBe('1');
    void db.put('u', '2');
    expect(db.getSync('u')?.toString()).toBe('2');
    await db.close();
  });
});
