/**
 * Regression: a compaction whose outputs are larger than its inputs — here a database written with
 * lz4 and reopened with compression 'none', so highly compressible tables grow ten-fold when
 * rewritten — ran out of its reserved output file numbers and latched "compaction ran out of
 * reserved output file numbers" as the background error: every later write failed. Now the
 * reservation counts the inputs' uncompressed sizes, and a merge that still runs out writes a
 * larger last file instead of failing.
 */
import { describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';

const key = (i: number): string => `k${String(i).padStart(4, '0')}`;

describe('a compaction that writes more than it reads', () => {
  it('after a reopen with weaker compression, compacts without a background error and loses nothing', async () => {
    const fs = new MemFileSystem();
    const shape = { fs, writeBufferSize: 64 * 1024, maxFileSize: 1024, blockSize: 256 } as const;
    let db = await DB.open('/db', { ...shape, compression: 'lz4' });
    for (let i = 0; i < 100; i++) await db.put(key(i), Buffer.alloc(500, 0x61 + (i % 26)));
    await db.close();
    db = await DB.open('/db', { ...shape, compression: 'lz4' }); // the WAL goes to one small lz4 table
    const before = JSON.parse(db.getProperty('sievekv.stats')!) as { levels: { level: number; bytes: number }[] };
    await db.close();

    db = await DB.open('/db', { ...shape, compression: 'none' });
    try {
      await db.compactRange();
      await db.put('after', 'x'); // no background error latched
      for (let i = 0; i < 100; i++) expect((await db.get(key(i)))?.equals(Buffer.alloc(500, 0x61 + (i % 26))), key(i)).toBe(true);
      const after = JSON.parse(db.getProperty('sievekv.stats')!) as { levels: { level: number; files: number; bytes: number }[] };
      const l1 = after.levels.find((l) => l.level === 1)!;
      // The rewrite really outgrew its input, and was cut into files near the 1 KiB target.
      expect(l1.bytes).toBeGreaterThan(5 * before.levels.reduce((s, l) => s + l.bytes, 0));
      expect(l1.files).toBeGreaterThan(20);
    } finally {
      await db.close();
    }
  });
});
