/**
 * `db.checkpoint(dir)` / `checkpointSync`: the copy opens to exactly the writes issued before the
 * call, even while writes, flushes and compactions go on during it; it is independent of the
 * original both ways; tables are hard links on the real file system (one inode) and copies where
 * the file system refuses links; tables compacted away during the copy are kept until it is done;
 * a sharded database copies every region; the copy survives a crash once made; a bad target or
 * a failed copy is a typed error that leaves nothing behind.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DB, type OpenOptions } from '../../src/db.js';
import { ioError, isSieveError } from '../../src/errors.js';
import { FaultyFileSystem } from '../../src/fs/faulty-fs.js';
import type { FileSystem } from '../../src/fs/file-system.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';
import { JumpRouter } from '../../src/shard/jump-router.js';
import { parseFileName } from '../../src/version/filenames.js';
import { rng, testSeed } from '../support/seed.js';

const SMALL: OpenOptions = { writeBufferSize: 8 * 1024, maxFileSize: 4 * 1024, blockSize: 512, compression: 'none' };

const temp: string[] = [];
afterAll(() => {
  for (const d of temp) rmSync(d, { recursive: true, force: true });
});
function tempRoot(): string {
  const d = mkdtempSync(join(tmpdir(), 'sievekv-checkpoint-'));
  temp.push(d);
  return d;
}

const key = (i: number): string => `key-${String(i).padStart(6, '0')}`;

/** Every entry of `db`, as key → value strings. */
async function contents(db: DB): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const [k, v] of db.iterator()) out.set(k.toString(), v.toString());
  return out;
}

/** Opens `dir` (with `options`), reads everything, closes it. */
async function contentsOf(dir: string, options: OpenOptions = {}): Promise<Map<string, string>> {
  const db = await DB.open(dir, { ...SMALL, createIfMissing: false, ...options });
  try {
    return await contents(db);
  } finally {
    await db.close();
  }
}

function tableNames(fs: FileSystem, dir: string): string[] {
  return fs
    .list(dir)
    .filter((n) => parseFileName(n)?.type === 'table')
    .sort();
}

async function expectError(p: Promise<unknown>, code: string, message?: RegExp): Promise<void> {
  let caught: unknown;
  try {
    await p;
  } catch (err) {
    caught = err;
  }
  expect(isSieveError(caught) ? caught.code : caught).toBe(code);
  if (message !== undefined) expect((caught as Error).message).toMatch(message);
}

/** A file system like the real one that refuses hard links, as across two file systems. */
class NoLinkFileSystem extends NodeFileSystem {
  links = 0;
  override link(from: string): void {
    this.links++;
    const cause = Object.assign(new Error(`EXDEV: cross-device link not permitted, link '${from}'`), { code: 'EXDEV' });
    throw ioError('link failed: EXDEV', { file: from, cause });
  }
}

describe('checkpoint: what the copy holds', () => {
  it('during concurrent writes, flushes and compactions: exactly the writes issued before the call', async () => {
    const seed = testSeed();
    const next = rng(seed ^ 0xc4e);
    const root = tempRoot();
    const db = await DB.open(join(root, 'db'), SMALL);
    const model = new Map<string, string>();
    const pending: Promise<unknown>[] = [];
    let n = 0;
    /** Issues one write (not awaited) and applies it to the model at once: issue order is commit order. */
    const issue = (): void => {
      const r = next();
      const i = Math.floor(next() * 3000);
      const value = `v${n++}-${'x'.repeat(Math.floor(next() * 60))}`;
      if (r < 0.1) {
        pending.push(db.del(key(i)));
        model.delete(key(i));
      } else if (r < 0.2) {
        const ops = Array.from({ length: 20 }, (_, j) => ({ type: 'put' as const, key: key((i + j) % 3000), value: `${value}-${j}` }));
        pending.push(db.batch(ops, { sync: next() < 0.5 }));
        for (const op of ops) model.set(op.key, op.value);
      } else {
        pending.push(db.put(key(i), value, { sync: next() < 0.05 }));
        model.set(key(i), value);
      }
    };
    for (let i = 0; i < 4000; i++) {
      issue();
      if (i % 50 === 0) await Promise.all(pending.splice(0));
    }
    // Some writes still queued or waiting on their fdatasync when the checkpoint is called.
    for (let i = 0; i < 30; i++) issue();
    const expected = new Map(model);
    const target = join(root, 'copy');
    const checkpoint = db.checkpoint(target);
    let during = 0;
    let finished = false;
    void checkpoint.then(() => (finished = true), () => (finished = true));
    // Writes after the call, while the checkpoint works: none of them may be in the copy.
    while (!finished) {
      for (let i = 0; i < 20; i++) issue();
      during += 20;
      await new Promise((resolve) => setImmediate(resolve));
    }
    const report = await checkpoint;
    for (let i = 0; i < 500; i++) issue();
    await Promise.all(pending.splice(0));
    await db.compactRange();
    expect(report.dir).toBe(target);
    expect(report.tables.linked + report.tables.copied).toBeGreaterThan(0);
    expect(report.wals.files).toBeGreaterThan(0);
    const copy = await contentsOf(target);
    expect(copy.size, `SIEVE_SEED=${seed}`).toBe(expected.size);
    expect(copy).toEqual(expected);
    expect(during).toBeGreaterThan(0);
    expect(await contents(db)).toEqual(model);
    await db.close();
  });

  it('the copy and the original are independent, both ways, through compaction on either side', async () => {
    const root = tempRoot();
    const db = await DB.open(join(root, 'db'), SMALL);
    for (let i = 0; i < 2000; i++) await db.put(key(i), `a${i}`);
    await db.compactRange();
    for (let i = 0; i < 100; i++) await db.put(key(i), `b${i}`); // in the WAL only
    const target = join(root, 'copy');
    await db.checkpoint(target);
    const copy = await DB.open(target, { ...SMALL, createIfMissing: false });
    // The original moves on: overwrites, deletes, a compaction that deletes the tables it shared.
    for (let i = 0; i < 2000; i += 2) await db.put(key(i), `c${i}`);
    await db.del(key(1));
    await db.compactRange();
    expect(copy.getSync(key(0))?.toString()).toBe('b0');
    expect(copy.getSync(key(1))?.toString()).toBe('b1');
    expect(copy.getSync(key(1998))?.toString()).toBe('a1998');
    // The copy moves on too.
    await copy.put(key(3), 'copy-only');
    await copy.del(key(5));
    await copy.compactRange();
    expect(db.getSync(key(3))?.toString()).toBe('b3');
    expect(db.getSync(key(5))?.toString()).toBe('b5');
    expect(db.getSync(key(0))?.toString()).toBe('c0');
    await copy.close();
    await db.close();
    const reopened = await contentsOf(target);
    expect(reopened.get(key(3))).toBe('copy-only');
    expect(reopened.has(key(5))).toBe(false);
    expect(reopened.get(key(1))).toBe('b1');
    expect(reopened.size).toBe(1999);
  });

  it('checkpointSync gives the same copy; the copy survives a crash once made', async () => {
    const mem = new MemFileSystem();
    const db = await DB.open('/db', { ...SMALL, fs: mem });
    for (let i = 0; i < 1500; i++) db.putSync(key(i), `v${i}`);
    db.delSync(key(7));
    const report = db.checkpointSync('/copy');
    db.putSync(key(8), 'after');
    expect(report.lastSequence).toBe(1501);
    const expected = new Map(Array.from({ length: 1500 }, (_, i) => [key(i), `v${i}`] as const).filter(([k]) => k !== key(7)));
    const crashed = mem.crashClone();
    await db.close();
    expect(await contentsOf('/copy', { fs: crashed })).toEqual(expected);
    expect(await contentsOf('/copy', { fs: mem })).toEqual(expected);
  });
});

describe('checkpoint: links and copies', () => {
  it('hard-links the tables on the real file system (one inode, two names) and copies the rest', async () => {
    const root = tempRoot();
    const dir = join(root, 'db');
    const db = await DB.open(dir, SMALL);
    for (let i = 0; i < 1500; i++) await db.put(key(i), `v${i}`);
    await db.compactRange();
    await db.put('tail', 'in the WAL');
    const target = join(root, 'copy');
    const report = await db.checkpoint(target);
    const fs = new NodeFileSystem();
    const tables = tableNames(fs, target);
    expect(tables.length).toBeGreaterThan(1);
    expect(report.tables).toMatchObject({ linked: tables.length, copied: 0 });
    for (const name of tables) {
      expect(statSync(join(target, name)).ino).toBe(statSync(join(dir, name)).ino);
    }
    // WALs and the MANIFEST are copies: the original appends to them.
    for (const name of readdirSync(target).filter((n) => n.endsWith('.log') || n.startsWith('MANIFEST-'))) {
      expect(statSync(join(target, name)).ino).not.toBe(statSync(join(dir, name)).ino);
    }
    expect(report.bytesCopied).toBeLessThan(report.tables.bytes);
    expect(readdirSync(target)).not.toContain('LOCK');
    await db.close();
    expect((await contentsOf(target)).get('tail')).toBe('in the WAL');
  });

  it('copies the tables where the file system refuses links (EXDEV), asking only once', async () => {
    const root = tempRoot();
    const dir = join(root, 'db');
    const fs = new NoLinkFileSystem();
    const db = await DB.open(dir, { ...SMALL, fs });
    for (let i = 0; i < 1500; i++) await db.put(key(i), `v${i}`);
    await db.compactRange();
    const target = join(root, 'copy');
    const report = await db.checkpoint(target);
    const tables = tableNames(fs, target);
    expect(tables.length).toBeGreaterThan(1);
    expect(report.tables).toMatchObject({ linked: 0, copied: tables.length });
    expect(fs.links).toBe(1);
    for (const name of tables) {
      expect(statSync(join(target, name)).ino).not.toBe(statSync(join(dir, name)).ino);
      expect(statSync(join(target, name)).size).toBe(statSync(join(dir, name)).size);
    }
    expect(report.bytesCopied).toBeGreaterThan(report.tables.bytes);
    await db.close();
    expect((await contentsOf(target)).size).toBe(1500);
  });

  it('keeps the tables a compaction replaces during the copy until the copy is done, then deletes them', async () => {
    const mem = new MemFileSystem();
    const fs = new FaultyFileSystem(mem);
    fs.inject({ ops: ['link'], errno: 'EPERM', sticky: true }); // copies: the checkpoint takes many turns
    const db = await DB.open('/db', { ...SMALL, fs });
    for (let i = 0; i < 3000; i++) db.putSync(key(i), `v${i}-${'y'.repeat(i % 50)}`);
    await db.compactRange();
    for (let i = 0; i < 3000; i += 3) db.putSync(key(i), `w${i}`);
    const before = tableNames(mem, '/db');
    let compacted = false;
    let compaction: Promise<void> | undefined;
    /** What was on disk once the compaction was installed, while the copy went on. */
    let onDiskAfterCompaction: Set<string> | undefined;
    const report = await db.checkpoint('/copy', {
      onProgress: () => {
        compaction ??= db.compactRange().then(() => void (compacted = true));
        if (compacted) onDiskAfterCompaction ??= new Set(tableNames(mem, '/db'));
      },
    });
    await compaction;
    expect(compacted).toBe(true);
    expect(onDiskAfterCompaction).toBeDefined();
    expect(report.tables.copied).toBe(before.length);
    // The tables of the capture that the compaction replaced: still on disk after it was
    // installed (held by the checkpoint), deleted once the checkpoint let go of them.
    const after = new Set(tableNames(mem, '/db'));
    const held = before.filter((name) => onDiskAfterCompaction!.has(name) && !after.has(name));
    expect(held.length).toBeGreaterThan(0);
    const expected = await contents(db);
    await db.close();
    expect(await contentsOf('/copy', { fs: mem })).toEqual(expected);
  });

  it('copies every region of a sharded database, and its REGIONS', async () => {
    const root = tempRoot();
    const router = new JumpRouter(4);
    const dir = join(root, 'db');
    const db = await DB.open(dir, { ...SMALL, router });
    const expected = new Map<string, string>();
    for (let i = 0; i < 3000; i++) {
      await db.put(key(i), `r${i}`);
      expected.set(key(i), `r${i}`);
    }
    await db.compactRange();
    await db.batch([
      { type: 'put', key: 'late-a', value: '1' },
      { type: 'put', key: 'late-b', value: '2' },
      { type: 'del', key: key(10) },
    ]);
    expected.set('late-a', '1').set('late-b', '2').delete(key(10));
    const target = join(root, 'copy');
    const report = await db.checkpoint(target);
    await db.close();
    expect(report.regions).toBe(4);
    const fs = new NodeFileSystem();
    for (let r = 1; r < 4; r++) {
      const tables = tableNames(fs, join(target, `region-${r}`));
      expect(tables.length).toBeGreaterThan(0);
      for (const name of tables) expect(statSync(join(target, `region-${r}`, name)).ino).toBe(statSync(join(dir, `region-${r}`, name)).ino);
    }
    expect(await contentsOf(target, { router })).toEqual(expected);
    await expectError(DB.open(target, { ...SMALL }), 'INVALID_ARGUMENT', /router/);
  });
});

describe('checkpoint: errors', () => {
  it('a non-empty directory or a file is INVALID_ARGUMENT; an empty directory is taken', async () => {
    const root = tempRoot();
    const db = await DB.open(join(root, 'db'), SMALL);
    await db.put('k', 'v');
    mkdirSync(join(root, 'full'));
    writeFileSync(join(root, 'full', 'mine.txt'), 'keep');
    await expectError(db.checkpoint(join(root, 'full')), 'INVALID_ARGUMENT', /not empty/);
    expect(readdirSync(join(root, 'full'))).toEqual(['mine.txt']);
    writeFileSync(join(root, 'file'), 'x');
    await expectError(db.checkpoint(join(root, 'file')), 'INVALID_ARGUMENT', /not a directory/);
    expect(() => db.checkpointSync(join(root, 'db'))).toThrow(/not empty/);
    await expectError(db.checkpoint(''), 'INVALID_ARGUMENT');
    await expectError(db.checkpoint(join(root, 'x'), { progress: true } as never), 'INVALID_ARGUMENT', /unknown checkpoint option/);
    mkdirSync(join(root, 'empty'));
    await db.checkpoint(join(root, 'empty'));
    await db.close();
    expect((await contentsOf(join(root, 'empty'))).get('k')).toBe('v');
  });

  it('two checkpoints into one directory at once: the second is refused', async () => {
    const mem = new MemFileSystem();
    const db = await DB.open('/db', { ...SMALL, fs: mem });
    for (let i = 0; i < 500; i++) db.putSync(key(i), 'v');
    const first = db.checkpoint('/copy');
    await expectError(db.checkpoint('/copy'), 'INVALID_ARGUMENT', /already being made/);
    await first;
    await db.close();
    expect((await contentsOf('/copy', { fs: mem })).size).toBe(500);
  });

  it('read-only and closed databases: NOT_SUPPORTED and CLOSED, nothing made', async () => {
    const mem = new MemFileSystem();
    const db = await DB.open('/db', { ...SMALL, fs: mem });
    await db.put('k', 'v');
    const view = await DB.open('/db', { ...SMALL, fs: mem, readOnly: true });
    await expectError(view.checkpoint('/copy'), 'NOT_SUPPORTED');
    await view.close();
    await db.close();
    await expectError(db.checkpoint('/copy'), 'CLOSED');
    expect(mem.exists('/copy')).toBe(false);
  });

  it('a failed copy is IO_ERROR and leaves no file behind; the original is untouched', async () => {
    const mem = new MemFileSystem();
    const fs = new FaultyFileSystem(mem);
    const db = await DB.open('/db', { ...SMALL, fs });
    for (let i = 0; i < 1500; i++) db.putSync(key(i), `v${i}`);
    await db.compactRange();
    fs.inject({ ops: ['link'], path: /^\/copy\//, after: 2, errno: 'EIO' });
    await expectError(db.checkpoint('/copy'), 'IO_ERROR', /link failed: EIO/);
    expect(mem.list('/copy')).toEqual([]);
    fs.clearFaults();
    fs.inject({ ops: ['append'], path: /^\/copy\/MANIFEST/, errno: 'ENOSPC' });
    await expectError(db.checkpoint('/copy'), 'IO_ERROR', /ENOSPC/);
    expect(mem.list('/copy')).toEqual([]);
    fs.clearFaults();
    await db.checkpoint('/copy');
    expect((await contents(db)).size).toBe(1500);
    await db.close();
    expect((await contentsOf('/copy', { fs: mem })).size).toBe(1500);
  });
});
