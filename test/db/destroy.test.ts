/**
 * DB.destroy (db/destroy.ts): removes only a database's own files — a file of the user's survives,
 * and then so does the directory — refuses with LOCKED while the database is open, and removes
 * the directory itself once nothing else is in it (real files; the in-memory file system has no
 * way to remove a directory).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { DezhouRegionRouter } from '../../src/shard/dezhou-router.js';

const temp: string[] = [];
afterAll(() => {
  for (const d of temp) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sievekv-destroy-'));
  temp.push(d);
  return d;
}

/** A closed database in `dir` with tables, a WAL, LOG and a MANIFEST. */
async function makeDatabase(dir: string, options: Parameters<typeof DB.open>[1] = {}): Promise<void> {
  const db = await DB.open(dir, { writeBufferSize: 16 * 1024, ...options });
  for (let i = 0; i < 600; i++) await db.put(`key-${i}`, `value-${i}`.repeat(4));
  await db.compactRange();
  for (let i = 0; i < 10; i++) await db.put(`tail-${i}`, 'in the WAL');
  await db.close();
}

describe('DB.destroy', () => {
  it('removes every file of a closed database, then the directory', async () => {
    const dir = join(tempDir(), 'db');
    await makeDatabase(dir);
    const names = readdirSync(dir);
    expect(names.some((n) => n.endsWith('.ldb'))).toBe(true);
    expect(names.some((n) => n.endsWith('.log'))).toBe(true);
    const report = await DB.destroy(dir);
    expect(report.removedDirectory).toBe(true);
    expect(report.kept).toEqual([]);
    expect(existsSync(dir)).toBe(false);
    for (const n of names) expect(report.removed).toContain(join(dir, n));
  });

  it('leaves a file that is not the database’s, and so the directory', async () => {
    const dir = join(tempDir(), 'db');
    await makeDatabase(dir);
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    writeFileSync(join(dir, 'MANIFEST.backup'), 'mine too'); // not a database name
    const report = await DB.destroy(dir);
    expect(report.removedDirectory).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(['MANIFEST.backup', 'notes.txt']);
    expect(report.kept).toEqual([join(dir, 'MANIFEST.backup'), join(dir, 'notes.txt')]);
  });

  it('is LOCKED while the database is open, and removes nothing', async () => {
    const dir = join(tempDir(), 'db');
    await makeDatabase(dir);
    const db = await DB.open(dir);
    const before = readdirSync(dir).sort();
    await expect(DB.destroy(dir)).rejects.toMatchObject({ code: 'LOCKED' });
    expect(readdirSync(dir).sort()).toEqual(before);
    expect(db.getSync('key-7')?.toString()).toBe('value-7'.repeat(4));
    await db.close();
    await DB.destroy(dir);
    expect(existsSync(dir)).toBe(false);
  });

  it('removes a sharded database’s region directories', async () => {
    const dir = join(tempDir(), 'db');
    await makeDatabase(dir, { router: new DezhouRegionRouter() });
    expect(readdirSync(dir)).toContain('region-1');
    const report = await DB.destroy(dir);
    expect(report.removedDirectory).toBe(true);
    expect(existsSync(dir)).toBe(false);
  });

  it('a missing directory is nothing to destroy', async () => {
    expect(await DB.destroy(join(tempDir(), 'none'))).toEqual({ removed: [], kept: [], removedDirectory: false });
  });

  it('goes through the FileSystem seam (in memory)', async () => {
    const fs = new MemFileSystem();
    const db = await DB.open('/db', { fs });
    await db.put('k', 'v');
    await expect(DB.destroy('/db', { fs })).rejects.toMatchObject({ code: 'LOCKED' });
    await db.close();
    const w = fs.createWritable('/db/keep.me');
    w.close();
    const report = await DB.destroy('/db', { fs });
    expect(fs.list('/db')).toEqual(['keep.me']);
    expect(report.kept).toEqual(['/db/keep.me']);
    expect(report.removed).toContain('/db/CURRENT');
  });
});
