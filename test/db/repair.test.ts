/**
 * DB.repair (db/repair.ts): a database that no longer opens — CURRENT deleted, a bit flipped in
 * the MANIFEST, a damaged table or WAL — is rebuilt from its files, and then opens with exactly
 * the data a model of the writes holds (less only what sat in damaged blocks, which the report
 * names, with the damaged file moved to lost/). Also: LevelDB-made directories, sharded
 * databases, tables whose key ranges overlap across former levels (a lookup must still find the
 * newest version), LOCKED while open, and a repair interrupted by a failing disk then re-run.
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DB, type OpenOptions } from '../../src/db.js';
import { isSieveError } from '../../src/errors.js';
import { encodeInternalKey, ValueType } from '../../src/format/internal-key.js';
import { FaultyFileSystem } from '../../src/fs/faulty-fs.js';
import type { FileSystem } from '../../src/fs/file-system.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { DezhouRegionRouter } from '../../src/shard/dezhou-router.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { TableBuilder } from '../../src/sstable/table-builder.js';
import { fixturePath, readJsonLines } from '../support/fixtures.js';
import { rng } from '../support/seed.js';
import { testSeed } from '../support/seed.js';

const temp: string[] = [];
afterAll(() => {
  for (const d of temp) rmSync(d, { recursive: true, force: true });
});

const SMALL: OpenOptions = { writeBufferSize: 16 * 1024, blockSize: 512, compression: 'none' };
const keyOf = (i: number): string => `key-${String(i).padStart(5, '0')}`;
type Model = Map<string, string>;

/**
 * A database on `fs` in /db written in rounds (puts, overwrites, deletes), flushed and compacted
 * between rounds so that tables sit on several levels, with a last round left in the WAL.
 */
async function buildDatabase(fs: FileSystem, options: OpenOptions = {}): Promise<Model> {
  const next = rng(testSeed());
  const model: Model = new Map();
  const db = await DB.open('/db', { ...SMALL, fs, ...options });
  for (let round = 0; round < 5; round++) {
    for (let n = 0; n < 300; n++) {
      const i = Math.floor(next() * 1200);
      if (next() < 0.15) {
        await db.del(keyOf(i), { sync: true }); // synced: a crash clone keeps it
        model.delete(keyOf(i));
      } else {
        const v = `v${round}-${i}-${'x'.repeat(Math.floor(next() * 40))}`;
        await db.put(keyOf(i), v, { sync: true });
        model.set(keyOf(i), v);
      }
    }
    if (round === 1) await db.compactRange();
    else if (round < 4) await db.compactRange(keyOf(0), keyOf(400));
  }
  // Let the last flush install: a close abandons one still waiting for its turn (its WAL stays).
  await new Promise((resolve) => setImmediate(resolve));
  await db.close();
  return model;
}

/** Opens /db and checks it holds exactly `model` (scan and point reads, absent keys too). */
async function expectContents(fs: FileSystem, model: Model, options: OpenOptions = {}, dir = '/db'): Promise<void> {
  const db = await DB.open(dir, { ...SMALL, fs, createIfMissing: false, ...options });
  try {
    const seen: [string, string][] = [];
    for await (const [k, v] of db.iterator()) seen.push([k.toString(), v.toString()]);
    expect(seen).toEqual([...model].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    for (let i = 0; i < 1200; i++) expect(db.getSync(keyOf(i))?.toString()).toBe(model.get(keyOf(i)));
  } finally {
    await db.close();
  }
}

async function openCode(fs: FileSystem): Promise<string> {
  try {
    const db = await DB.open('/db', { ...SMALL, fs, createIfMissing: false });
    await db.close();
    return 'ok';
  } catch (err) {
    if (isSieveError(err)) return err.code;
    throw err;
  }
}

function flip(fs: MemFileSystem, path: string, offset: number): void {
  const bytes = fs.readFile(path);
  bytes[offset]! ^= 0x10;
  rewrite(fs, path, bytes);
}

function rewrite(fs: MemFileSystem, path: string, bytes: Uint8Array): void {
  const w = fs.createWritable(path);
  w.append(bytes);
  w.sync();
  w.close();
}

const names = (fs: FileSystem, dir: string, suffix: string): string[] => fs.list(dir).filter((n) => n.endsWith(suffix)).sort();

describe('DB.repair', () => {
  it('recovers every key after CURRENT is deleted (tables on several levels, deletes, a WAL tail)', async () => {
    const fs = new MemFileSystem();
    const model = await buildDatabase(fs);
    expect(names(fs, '/db', '.log').length).toBeGreaterThan(0);
    fs.remove('/db/CURRENT');
    const report = await DB.repair('/db', { ...SMALL, fs });
    expect(report.dataLost).toBe(false);
    expect(report.problems).toEqual([]);
    expect(report.wal.records).toBeGreaterThan(0);
    expect(report.tables.found).toBeGreaterThan(1);
    expect(report.tables.kept).toBeGreaterThan(0);
    expect(report.entries.kept).toBeGreaterThanOrEqual(model.size); // and the newest deletions
    expect(fs.readFile('/db/CURRENT')).toEqual(new TextEncoder().encode(`${report.manifest.slice('/db/'.length)}\n`));
    await expectContents(fs, model);
    // The old MANIFEST went to lost/; the replayed WAL and the merged tables are gone.
    expect(fs.list('/db/lost').some((n) => n.startsWith('MANIFEST-'))).toBe(true);
    expect(report.lost.every((p) => p.startsWith('/db/lost/'))).toBe(true);
  });

  it('recovers every key after a bit flips in the MANIFEST (which no longer opens)', async () => {
    const fs = new MemFileSystem();
    const model = await buildDatabase(fs);
    const manifest = `/db/${names(fs, '/db', '').find((n) => n.startsWith('MANIFEST-'))}`;
    flip(fs, manifest, Math.floor(fs.size(manifest) / 2));
    expect(await openCode(fs)).toBe('CORRUPTION');
    const report = await DB.repair('/db', { ...SMALL, fs });
    expect(report.dataLost).toBe(false);
    await expectContents(fs, model);
  });

  it('a damaged table: its readable blocks are kept, it goes to lost/, the other tables stay whole', async () => {
    const fs = new MemFileSystem();
    const db = await DB.open('/db', { ...SMALL, fs });
    const model: Model = new Map();
    for (let i = 0; i < 400; i++) {
      await db.put(`a${keyOf(i)}`, `value-a-${i}`);
      model.set(`a${keyOf(i)}`, `value-a-${i}`);
    }
    await db.compactRange();
    const before = new Set(names(fs, '/db', '.ldb'));
    for (let i = 0; i < 400; i++) {
      await db.put(`b${keyOf(i)}`, `value-b-${i}`);
      model.set(`b${keyOf(i)}`, `value-b-${i}`);
    }
    await db.compactRange();
    await db.close();
    const bTables = names(fs, '/db', '.ldb').filter((n) => !before.has(n));
    expect(bTables.length).toBeGreaterThan(0);
    const damaged = `/db/${bTables[0]}`;
    flip(fs, damaged, 20); // inside the first data block
    expect(await openCode(fs)).toBe('ok'); // opening reads no data block…
    const db2 = await DB.open('/db', { ...SMALL, fs });
    await expect(async () => {
      for await (const _ of db2.iterator()) void _;
    }).rejects.toMatchObject({ code: 'CORRUPTION' }); // …but a scan meets the damage
    await db2.close();

    const report = await DB.repair('/db', { ...SMALL, fs });
    expect(report.dataLost).toBe(true);
    expect(report.tables.damaged).toBe(1);
    expect(report.tables.blocksDropped).toBe(1);
    expect(report.problems.some((p) => p.file === damaged && p.offset === 0)).toBe(true);
    expect(report.lost).toContain(`/db/lost/${bTables[0]}`);
    expect(fs.exists(damaged)).toBe(false);
    expect(fs.exists(`/db/lost/${bTables[0]}`)).toBe(true);

    const db3 = await DB.open('/db', { ...SMALL, fs, createIfMissing: false });
    try {
      const seen = new Map<string, string>();
      for await (const [k, v] of db3.iterator()) seen.set(k.toString(), v.toString());
      for (const [k, v] of model) {
        if (k.startsWith('a')) expect(seen.get(k), k).toBe(v); // another table's keys: all there
        else if (seen.has(k)) expect(seen.get(k)).toBe(v); // never a wrong value
      }
      const lostKeys = [...model.keys()].filter((k) => !seen.has(k));
      expect(lostKeys.length).toBeGreaterThan(0); // the damaged block's keys…
      expect(lostKeys.length).toBeLessThan(100); // …and no more than a block holds
      expect(lostKeys.every((k) => k.startsWith('b'))).toBe(true);
      expect(report.entries.kept).toBe(seen.size);
    } finally {
      await db3.close();
    }
  });

  it('a damaged WAL record: the other records are replayed, the WAL goes to lost/', async () => {
    const fs = new MemFileSystem();
    const db = await DB.open('/db', { fs });
    for (let i = 0; i < 10; i++) await db.put(keyOf(i), 'x'.repeat(5000) + i, { sync: true });
    await db.close();
    const wal = `/db/${names(fs, '/db', '.log')[0]}`;
    flip(fs, wal, 5007 * 2 + 100); // inside the third record
    const report = await DB.repair('/db', { fs });
    expect(report.dataLost).toBe(true);
    expect(report.wal.recordsDropped).toBeGreaterThan(0);
    expect(report.wal.records).toBeGreaterThanOrEqual(3); // records in later blocks survive
    expect(report.lost.some((p) => p.endsWith('.log'))).toBe(true);
    const db2 = await DB.open('/db', { fs, createIfMissing: false });
    try {
      expect(db2.getSync(keyOf(0))?.toString()).toBe('x'.repeat(5000) + 0);
      expect(db2.getSync(keyOf(9))?.toString()).toBe('x'.repeat(5000) + 9);
      for (let i = 0; i < 10; i++) {
        const v = db2.getSync(keyOf(i));
        if (v !== undefined) expect(v.toString()).toBe('x'.repeat(5000) + i);
      }
    } finally {
      await db2.close();
    }
  });

  it('overlapping tables from former levels: a lookup still finds the newest version', async () => {
    // Level 1 held {m@55 new, z@60}, level 2 {a@100, m@40 old} (a@100 came down later): the
    // level-2 table has the larger number and the larger sequences. Both at level 0, newest file
    // first, `get(m)` would answer the old value.
    const fs = new MemFileSystem();
    fs.mkdir('/db');
    const write = (number: number, entries: [string, number, string][]): void => {
      const file = fs.createWritable(`/db/${String(number).padStart(6, '0')}.ldb`);
      const b = new TableBuilder(file, { compression: CompressionType.NONE });
      for (const [k, seq, v] of entries) b.add(encodeInternalKey(new TextEncoder().encode(k), seq, ValueType.VALUE), new TextEncoder().encode(v));
      b.finish();
      file.sync();
      file.close();
    };
    write(5, [['m', 55, 'new'], ['z', 60, 'z']]);
    write(9, [['a', 100, 'a'], ['m', 40, 'old']]);
    const report = await DB.repair('/db', { fs });
    expect(report.lastSequence).toBe(100);
    expect(report.entries).toEqual({ read: 4, kept: 3, superseded: 1 });
    const db = await DB.open('/db', { fs, createIfMissing: false });
    try {
      expect(db.getSync('m')?.toString()).toBe('new');
      expect(db.getSync('a')?.toString()).toBe('a');
      expect(db.getSync('z')?.toString()).toBe('z');
      await db.put('m', 'newer');
      expect(db.getSync('m')?.toString()).toBe('newer');
    } finally {
      await db.close();
    }
  });

  it('files a readable MANIFEST retired (left by failed removals) bring no deleted value back', async () => {
    const fs = new MemFileSystem();
    const db = await DB.open('/db', { ...SMALL, fs });
    for (let i = 0; i < 50; i++) await db.put(keyOf(i), `old-${i}`);
    const saved = new Map<string, Uint8Array>();
    for (const wal of names(fs, '/db', '.log')) saved.set(wal, fs.readFile(`/db/${wal}`));
    await db.compactRange();
    for (const t of names(fs, '/db', '.ldb')) saved.set(t, fs.readFile(`/db/${t}`));
    for (let i = 0; i < 50; i += 2) await db.del(keyOf(i));
    await db.compactRange(); // the deletions meet the values at the last level: both are dropped
    await db.close();
    const restored = [...saved.keys()].filter((n) => !fs.exists(`/db/${n}`));
    expect(restored.some((n) => n.endsWith('.log'))).toBe(true);
    expect(restored.some((n) => n.endsWith('.ldb'))).toBe(true);
    for (const n of restored) rewrite(fs, `/db/${n}`, saved.get(n)!); // as if their removal had failed
    fs.remove('/db/CURRENT');
    const report = await DB.repair('/db', { ...SMALL, fs });
    expect(report.tables.obsolete + report.wal.obsolete).toBe(restored.length);
    for (const n of restored) expect(report.lost).toContain(`/db/lost/${n}`);
    const model: Model = new Map();
    for (let i = 1; i < 50; i += 2) model.set(keyOf(i), `old-${i}`);
    await expectContents(fs, model);
  });

  it('a sharded database (DezhouKV router): each region rebuilt in its sub-directory', async () => {
    const fs = new MemFileSystem();
    const router = new DezhouRegionRouter();
    const model = await buildDatabase(fs, { router });
    expect(fs.list('/db/region-1').some((n) => n.endsWith('.ldb'))).toBe(true);
    fs.remove('/db/CURRENT');
    const report = await DB.repair('/db', { ...SMALL, fs }); // the router is known by its name
    expect(report.regions).toBe(4);
    expect(report.dataLost).toBe(false);
    await expectContents(fs, model, { router });
  });

  it('refuses while the database is open (LOCKED), then repairs once it is closed', async () => {
    const fs = new MemFileSystem();
    const db = await DB.open('/db', { fs });
    await db.put('k', 'v');
    await expect(DB.repair('/db', { fs })).rejects.toMatchObject({ code: 'LOCKED' });
    await db.close();
    await DB.repair('/db', { fs });
    await expectContents(fs, new Map([['k', 'v']]));
  });

  it('a directory holding no database is INVALID_ARGUMENT, and is left untouched', async () => {
    const fs = new MemFileSystem();
    fs.mkdir('/empty');
    const w = fs.createWritable('/empty/notes.txt');
    w.close();
    await expect(DB.repair('/empty', { fs })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(DB.repair('/missing', { fs })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(fs.list('/empty')).toEqual(['notes.txt']);
  });

  it('a disk failing mid-repair, then a crash: a second repair recovers every key', async () => {
    const base = new MemFileSystem();
    const model = await buildDatabase(base);
    base.remove('/db/CURRENT');
    base.syncDir('/db');
    // Count the repair's calls once, on a copy; then fail each kind of write early, midway, late.
    const probe = new FaultyFileSystem(base.crashClone());
    await DB.repair('/db', { ...SMALL, fs: probe });
    for (const op of ['create', 'append', 'sync', 'rename', 'remove', 'syncDir', 'mkdir'] as const) {
      const total = probe.calls[op];
      for (const after of new Set([0, Math.floor(total / 2), Math.max(0, total - 1)])) {
        const disk = base.crashClone();
        const faulty = new FaultyFileSystem(disk);
        faulty.inject({ ops: [op], after });
        const outcome = await DB.repair('/db', { ...SMALL, fs: faulty }).then(
          () => 'finished',
          (err: unknown) => {
            if (!isSieveError(err)) throw err;
            return err.message;
          },
        );
        void outcome;
        const rebooted = disk.crashClone(); // what the disk kept of the failed repair
        await DB.repair('/db', { ...SMALL, fs: rebooted });
        await expectContents(rebooted, model);
      }
    }
  });
});

describe('DB.repair on LevelDB-made directories', () => {
  function copyFixture(name: string): string {
    const root = mkdtempSync(join(tmpdir(), 'sievekv-repair-'));
    temp.push(root);
    const dir = join(root, name);
    cpSync(fixturePath(name), dir, { recursive: true });
    return dir;
  }

  for (const name of ['ldb-small-nocomp', 'ldb-snappy-small', 'ldb-log-edges']) {
    for (const damage of ['none', 'no CURRENT or MANIFEST'] as const) {
      it(`${name} (${damage}): repaired, it holds exactly expected.jsonl`, async () => {
        const expected = readJsonLines<{ key: string; value: string }>(name, 'expected.jsonl');
        const deleted = readJsonLines<{ key: string }>(name, 'deleted.jsonl');
        const dir = copyFixture(name);
        if (damage !== 'none') {
          for (const n of readdirSync(dir)) if (n === 'CURRENT' || n.startsWith('MANIFEST-')) unlinkSync(join(dir, n));
        }
        const report = await DB.repair(dir, { compression: 'snappy' });
        expect(report.dataLost).toBe(false);
        expect(existsSync(join(dir, 'CURRENT'))).toBe(true);
        const db = await DB.open(dir, { createIfMissing: false });
        try {
          const seen: { key: string; value: string }[] = [];
          for await (const [k, v] of db.iterator()) seen.push({ key: k.toString('hex'), value: v.toString('hex') });
          expect(seen).toEqual(expected);
          for (const { key, value } of expected) expect(db.getSync(Buffer.from(key, 'hex'))?.toString('hex')).toBe(value);
          for (const { key } of deleted) expect(db.getSync(Buffer.from(key, 'hex'))).toBeUndefined();
        } finally {
          await db.close();
        }
      });
    }
  }
});
