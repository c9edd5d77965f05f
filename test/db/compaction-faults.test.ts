/**
 * Failures of a compaction (issue 5): "a failure in the worker (disk full, EIO, a corrupt input
 * table) is latched as the DB's background error: writes fail with it, nothing is lost, reads go
 * on, and a reopen recovers."
 *
 * - A corrupt input table on NodeFileSystem (the merge runs on the worker thread): a byte flipped
 *   in a level-1 table's data block, then a compaction that must read it. The merge fails with
 *   CORRUPTION, which is latched; reads of other keys go on; close works; once the file is
 *   restored, a reopen holds every write and compacts.
 * - A compaction output that cannot be written (ENOSPC on create, append, sync; EIO on the
 *   directory sync) through FaultyFileSystem on MemFileSystem (inline jobs): IO_ERROR latched,
 *   the partial outputs removed, reads go on, and a reopen on the healthy file system holds
 *   everything and compacts.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { isSieveError, type SieveError } from '../../src/errors.js';
import { FaultyFileSystem, type Fault } from '../../src/fs/faulty-fs.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';
import type { FileSystem } from '../../src/fs/file-system.js';
import { compareUserKeyTo } from '../../src/version/version.js';
import { tableFileName } from '../../src/version/filenames.js';
import { VersionSet } from '../../src/version/version-set.js';

const OPTIONS = { writeBufferSize: 4096, maxFileSize: 4096, blockSize: 1024 } as const;
const key = (p: string, i: number): string => `${p}${String(i).padStart(4, '0')}`;
const val = (p: string, i: number, gen: number): string => `${key(p, i)}:${gen}:`.padEnd(100, '.');

async function rejection(p: Promise<unknown>): Promise<SieveError> {
  try {
    await p;
  } catch (err) {
    if (isSieveError(err)) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

async function scan(db: DB): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const [k, v] of db.iterator()) out.set(k.toString(), v.toString());
  return out;
}

/** The level-1 table of a closed database that holds `user` (replaying its MANIFEST). */
function tableAt(fs: FileSystem, dir: string, level: number, user: string): number {
  const versions = new VersionSet(dir, fs, 1);
  try {
    versions.recover();
    const u = Buffer.from(user);
    const f = versions.current.files(0, level).find((f) => compareUserKeyTo(u, f.smallest) >= 0 && compareUserKeyTo(u, f.largest) <= 0);
    if (f === undefined) throw new Error(`no level-${level} table holds ${user}`);
    return f.number;
  } finally {
    versions.close();
  }
}

describe('a corrupt input table, merged on the worker thread', () => {
  const root = mkdtempSync(join(tmpdir(), 'sievekv-compaction-faults-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('latches CORRUPTION; reads of other keys and close go on; restored, a reopen recovers everything', async () => {
    const dir = join(root, 'db');
    const expected = new Map<string, string>();
    let db = await DB.open(dir, OPTIONS);
    for (let i = 0; i < 300; i++) {
      await db.put(key('a', i), val('a', i, 0));
      expected.set(key('a', i), val('a', i, 0));
    }
    await db.compactRange(); // all in level 1, several tables
    for (let i = 0; i < 300; i++) {
      await db.put(key('b', i), val('b', i, 0));
      expected.set(key('b', i), val('b', i, 0));
    }
    await db.compactRange(key('b', 0), key('b', 9999));
    expect(Number(db.getProperty('sievekv.num-files-at-level1'))).toBeGreaterThan(4);
    await db.close();

    // Flip a byte in the first data block of the level-1 table holding a0000.
    const number = tableAt(new NodeFileSystem(), dir, 1, key('a', 0));
    const path = tableFileName(dir, number);
    const original = readFileSync(path);
    const damaged = Buffer.from(original);
    damaged[20] = damaged[20]! ^ 0x55;
    writeFileSync(path, damaged);

    db = await DB.open(dir, OPTIONS);
    // New versions of a0000..a0019, in the memtable; compacting their range must merge them with
    // the damaged table.
    const fresh = new Map<string, string>();
    for (let i = 0; i < 20; i++) {
      await db.put(key('a', i), val('a', i, 1));
      fresh.set(key('a', i), val('a', i, 1));
    }
    const err = await rejection(db.compactRange(key('a', 0), key('a', 19)));
    expect(err.code).toBe('CORRUPTION');
    // Latched: every write fails with it.
    const later = await rejection(db.put('later', 'x'));
    expect(later.code).toBe('CORRUPTION');
    expect(later.message).toBe(err.message);
    expect(() => db.putSync('later', 'x')).toThrow(err.message);
    // Reads go on: the fresh versions (flushed to level 0 before the merge), and other tables.
    for (const [k, v] of fresh) expect((await db.get(k))?.toString(), k).toBe(v);
    for (let i = 0; i < 300; i += 7) expect((await db.get(key('b', i)))?.toString()).toBe(val('b', i, 0));
    for (let i = 280; i < 300; i++) expect((await db.get(key('a', i)))?.toString()).toBe(val('a', i, 0));
    await db.close();

    // Repaired (the file restored), a reopen holds every write, compacts, and takes writes.
    writeFileSync(path, original);
    for (const [k, v] of fresh) expected.set(k, v);
    db = await DB.open(dir, OPTIONS);
    try {
      expect(await scan(db)).toEqual(expected);
      await db.compactRange();
      await db.put('after', 'repair');
      expect((await db.get('after'))?.toString()).toBe('repair');
      expect(await scan(db)).toEqual(new Map([...expected, ['after', 'repair']]));
    } finally {
      await db.close();
    }
  });
});

describe('a compaction output that cannot be written (inline jobs)', () => {
  // Uncompressed, so the merge writes several outputs (the builder appends each table in few
  // writes: a fault "after some appends" must fall past the first output).
  const OPTIONS_RAW = { ...OPTIONS, compression: 'none' } as const;
  const faults: [string, Fault][] = [
    ['disk full on create', { ops: ['create'], path: /\.ldb$/, errno: 'ENOSPC' }],
    ['disk full on append, after some outputs', { ops: ['append'], path: /\.ldb$/, after: 3, errno: 'ENOSPC', partial: true }],
    ['EIO on the output sync', { ops: ['sync'], path: /\.ldb$/ }],
    ['EIO on the directory sync', { ops: ['syncDir'], path: /^\/db$/ }],
  ];
  for (const [name, fault] of faults) {
    it(`${name}: IO_ERROR latched, partial outputs removed, nothing lost, reopen recovers`, async () => {
      const mem = new MemFileSystem();
      const fs = new FaultyFileSystem(mem);
      const expected = new Map<string, string>();
      let db = await DB.open('/db', { ...OPTIONS_RAW, fs });
      for (let i = 0; i < 200; i++) {
        await db.put(key('k', i), val('k', i, 0));
        expected.set(key('k', i), val('k', i, 0));
      }
      await db.compactRange();
      // Overwrites of half the keys, in level 0 (the WAL the reopen replays, flushed to a table).
      for (let i = 0; i < 200; i += 2) {
        await db.put(key('k', i), val('k', i, 1), { sync: i % 10 === 0 });
        expected.set(key('k', i), val('k', i, 1));
      }
      await db.close();
      db = await DB.open('/db', { ...OPTIONS_RAW, fs, l0CompactionTrigger: 100, l0SlowdownTrigger: 100, l0StopTrigger: 100 });
      await db.compactRange('~', '~'); // waits for the replayed memtable's flush; nothing overlaps '~'
      expect(Number(db.getProperty('sievekv.num-files-at-level0'))).toBeGreaterThan(0);
      const tablesBefore = mem.list('/db').filter((n) => n.endsWith('.ldb')).sort();

      fs.inject(fault);
      const err = await rejection(db.compactRange());
      expect(err.code).toBe('IO_ERROR');
      expect(fs.injected.length).toBeGreaterThan(0);
      fs.clearFaults();
      expect((await rejection(db.put('later', 'x'))).message).toBe(err.message);
      expect((await rejection(db.compactRange())).message).toBe(err.message);
      // Reads go on and see everything; the failed merge left no table behind.
      expect(await scan(db)).toEqual(expected);
      for (let i = 0; i < 200; i += 13) expect((await db.get(key('k', i)))?.toString()).toBe(expected.get(key('k', i)));
      expect(mem.list('/db').filter((n) => n.endsWith('.ldb')).sort()).toEqual(tablesBefore);
      await db.close();

      db = await DB.open('/db', { ...OPTIONS_RAW, fs: mem });
      try {
        expect(await scan(db)).toEqual(expected);
        await db.compactRange();
        expect(db.getProperty('sievekv.num-files-at-level0')).toBe('0');
        await db.put('after', 'reopen');
        expect(await scan(db)).toEqual(new Map([...expected, ['after', 'reopen']]));
      } finally {
        await db.close();
      }
    });
  }
});
