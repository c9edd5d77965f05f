/**
 * Issue 9, item 6: the directory lock was keyed by `path.resolve()` in a per-thread table, and a
 * lock file holding this process's own pid was taken for stale. So a second DB.open of an open
 * directory through a symbolic link succeeded; writing 20,000 keys through each handle, closing
 * both and reopening lost all of the first handle's acknowledged writes. The second open must be
 * LOCKED, and the first handle's writes must all be there after a reopen.
 */
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { isSieveError } from '../../src/errors.js';

const root = mkdtempSync(join(tmpdir(), 'sievekv-symlink-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('opening an open database again through a symbolic link', () => {
  it('is LOCKED, and every write of the first handle survives', { timeout: 60_000 }, async () => {
    const dir = join(root, 'db');
    const link = join(root, 'link');
    const db = await DB.open(dir);
    symlinkSync(dir, link);
    for (let i = 0; i < 2_000; i++) await db.put(`k${String(i).padStart(5, '0')}`, `first-${i}`);

    let caught: unknown;
    let second: DB | undefined;
    try {
      second = await DB.open(link);
    } catch (err) {
      caught = err;
    }
    if (second !== undefined) {
      // The bug: both handles write, and the second's MANIFEST and WAL replace the first's.
      for (let i = 0; i < 2_000; i++) await second.put(`k${String(i).padStart(5, '0')}`, `second-${i}`);
      await second.close();
    }
    expect(isSieveError(caught, 'LOCKED'), String(caught)).toBe(true);
    expect(String(caught)).toContain('this thread');

    await db.close();
    const reopened = await DB.open(link); // closed: any path may open it now
    let count = 0;
    for await (const [k, v] of reopened.iterator()) {
      expect(v.toString()).toBe(`first-${Number(k.toString().slice(1))}`);
      count++;
    }
    expect(count).toBe(2_000);
    await reopened.close();
  });
});
