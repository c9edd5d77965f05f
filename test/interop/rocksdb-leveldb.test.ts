/**
 * Who reads what sievekv writes, checked with the real readers (README "Files and formats",
 * docs/format.md "Footer"):
 *   - RocksDB 7.8 (Debian's rocksdb-tools): `ldb scan` reads a whole database of each compression
 *     (none, snappy, lz4), WAL tail included, and `sst_dump --command=scan` reads each of its
 *     tables, entry for entry what sievekv itself reads there;
 *   - LevelDB (1.20, through classic-level) reads the none and snappy databases, and refuses the
 *     lz4 one (its tables end in RocksDB's footer) with LevelDB's "not an sstable".
 * Each database holds thousands of keys (binary ones, empty values, deletions, overwrites) in
 * tables on level 0 and deeper, plus a WAL tail.
 *
 * RocksDB opens a LevelDB-format database only while level 0 holds at most one table: LevelDB's
 * MANIFEST records of new files carry no sequence numbers, and RocksDB's consistency check of
 * level 0's order (on in 7.8) refuses two such files — for LevelDB's own databases too. That
 * limit is tested here as well, and so is its remedy (compacting first). RocksDB's tools must be installed: without them
 * the tests fail saying so (CI installs them), they do not skip.
 */
import { ClassicLevel } from 'classic-level';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { TableInspector } from '../../src/tools/table-inspector.js';
import { randomBytes, rng, testSeed } from '../support/seed.js';
import { ldbScan, requireRocksDbTools, sstDumpScan, type HexPair, type SstEntry } from './rocksdb-tools.js';

const temp: string[] = [];
afterAll(() => {
  for (const d of temp) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sievekv-interop-'));
  temp.push(d);
  return d;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const byKey = (a: HexPair, b: HexPair): number => Buffer.compare(Buffer.from(a.key, 'hex'), Buffer.from(b.key, 'hex'));

type Compression = 'none' | 'snappy' | 'lz4';
const TYPE: Record<Compression, number> = { none: CompressionType.NONE, snappy: CompressionType.SNAPPY, lz4: CompressionType.LZ4 };

interface Built {
  dir: string;
  /** The live contents, sorted bytewise. */
  model: HexPair[];
  tables: string[];
  levels: number[];
}

/**
 * A closed sievekv database in a fresh directory: rounds of puts, overwrites and deletes (some
 * keys binary, some values empty), compacted down, then more tables on level 0, then a WAL tail.
 */
async function build(compression: Compression): Promise<Built> {
  const dir = join(tempDir(), `db-${compression}`);
  const next = rng(testSeed() ^ 0x0c0ffee ^ TYPE[compression]);
  const model = new Map<string, string>();
  const db = await DB.open(dir, { compression, writeBufferSize: 32 * 1024, maxFileSize: 12 * 1024, maxBytesForLevelBase: 64 * 1024 });
  const round = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) {
      const key =
        next() < 0.1 ? randomBytes(next, 1 + Math.floor(next() * 12)) : Buffer.from(`key-${String(Math.floor(next() * 4000)).padStart(5, '0')}`);
      if (next() < 0.1) {
        await db.del(key);
        model.delete(hex(key));
      } else {
        // Compressible text with some random bytes, so that most blocks are stored compressed.
        const value =
          next() < 0.05 ? new Uint8Array(0) : Buffer.concat([Buffer.from(`value ${i} `.repeat(1 + Math.floor(next() * 10))), randomBytes(next, Math.floor(next() * 8))]);
        await db.put(key, value);
        model.set(hex(key), hex(value));
      }
    }
  };
  await round(5000);
  await db.compactRange(); // every table to level 1 and deeper
  await round(120); // under one write buffer: one memtable…
  await flushToLevel0(db); // …and one level-0 table (see "at most one level-0 table" below)
  await round(40); // stays in the WAL
  const levels: number[] = [];
  for (let l = 0; l < 7; l++) levels.push(Number(db.getProperty(`sievekv.num-files-at-level${l}`)));
  await db.close();
  const tables = readdirSync(dir)
    .filter((f) => f.endsWith('.ldb'))
    .sort()
    .map((f) => join(dir, f));
  const sorted = [...model.entries()].map(([key, value]) => ({ key, value })).sort(byKey);
  return { dir, model: sorted, tables, levels };
}

/** Writes the memtable to a level-0 table, compacting nothing: the range holds no key. */
async function flushToLevel0(db: DB): Promise<void> {
  await db.compactRange(Buffer.alloc(13, 0xff), Buffer.alloc(14, 0xff));
}

/** What sievekv itself reads in the table at `path` (every entry, in table order), and its footer. */
function readWithSievekv(path: string): { entries: SstEntry[]; format: string; compressed: Record<string, number> } {
  const inspector = TableInspector.open(new NodeFileSystem(), path);
  try {
    const insp = inspector.inspect();
    expect(insp.faults, path).toEqual([]);
    const entries = [...inspector.entries(insp.index)].map((e) => ({ key: hex(e.userKey), seq: Number(e.sequence), type: e.type, value: hex(e.value) }));
    const compressed: Record<string, number> = {};
    for (const b of insp.blocks) if (b.kind === 'data') compressed[b.compression] = (compressed[b.compression] ?? 0) + 1;
    return { entries, format: insp.footer!.format, compressed };
  } finally {
    inspector.close();
  }
}

describe('RocksDB (ldb, sst_dump) and LevelDB read sievekv databases', () => {
  for (const compression of ['none', 'snappy', 'lz4'] as const) {
    describe(`compression ${compression}`, () => {
      let built: Built;
      beforeAll(async () => {
        built = await build(compression);
      });

      it('the database has thousands of keys in several tables, on level 0 and deeper, and a WAL tail', () => {
        expect(built.model.length).toBeGreaterThan(2500);
        expect(built.tables.length, JSON.stringify(built.levels)).toBeGreaterThanOrEqual(6);
        expect(built.levels[0]).toBe(1);
        expect(built.levels.slice(1).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(3);
        expect(readdirSync(built.dir).some((f) => f.endsWith('.log'))).toBe(true);
      });

      it('sst_dump reads every table: the same entries (user key, sequence, type, value) sievekv reads there', () => {
        requireRocksDbTools();
        const links = tempDir();
        let total = 0;
        const dataBlocks: Record<string, number> = {};
        for (const path of built.tables) {
          const ours = readWithSievekv(path);
          expect(ours.format).toBe(compression === 'lz4' ? 'rocksdb' : 'leveldb');
          for (const [type, n] of Object.entries(ours.compressed)) dataBlocks[type] = (dataBlocks[type] ?? 0) + n;
          const theirs = sstDumpScan(path, links);
          expect(theirs.length, path).toBe(ours.entries.length);
          expect(theirs).toEqual(ours.entries);
          total += theirs.length;
        }
        expect(total).toBeGreaterThan(built.model.length);
        // The tables really hold blocks of this compression (not only blocks stored raw).
        expect(dataBlocks[TYPE[compression]]).toBeGreaterThan(10);
      });

      it('ldb scan reads the database (tables and WAL): every live key and value, nothing else, in order', () => {
        requireRocksDbTools();
        const copy = join(tempDir(), 'copy');
        cpSync(built.dir, copy, { recursive: true });
        const seen = ldbScan(copy);
        expect(seen.length).toBe(built.model.length);
        expect(seen).toEqual(built.model);
      });

      if (compression === 'lz4') {
        it("LevelDB refuses it: its tables end in RocksDB's footer, not an sstable to LevelDB", async () => {
          const copy = join(tempDir(), 'copy');
          cpSync(built.dir, copy, { recursive: true });
          const ldb = new ClassicLevel<Buffer, Buffer>(copy, { keyEncoding: 'buffer', valueEncoding: 'buffer', createIfMissing: false });
          try {
            await ldb.open();
            await expect(ldb.iterator().all()).rejects.toThrow(/not an sstable \(bad magic number\)/);
          } finally {
            await ldb.close();
          }
        });
      } else {
        it('LevelDB (classic-level) reads every live key and value, nothing else, in order', async () => {
          const copy = join(tempDir(), 'copy');
          mkdirSync(copy);
          cpSync(built.dir, copy, { recursive: true });
          const ldb = new ClassicLevel<Buffer, Buffer>(copy, { keyEncoding: 'buffer', valueEncoding: 'buffer', createIfMissing: false });
          await ldb.open();
          try {
            const seen: HexPair[] = [];
            for await (const [k, v] of ldb.iterator()) seen.push({ key: hex(k), value: hex(v) });
            expect(seen.length).toBe(built.model.length);
            expect(seen).toEqual(built.model);
          } finally {
            await ldb.close();
          }
        });
      }
    });
  }
});

describe('RocksDB opens a LevelDB-format database only while level 0 holds at most one table', () => {
  const L0_ORDER = /Corruption: .*L0 file #\d+ with seqno 72057594037927935 0 vs\. file #\d+ with seqno 72057594037927935 0/;

  it('sievekv: ldb refuses two level-0 tables (sst_dump still reads each); after compactRange it reads everything', async () => {
    requireRocksDbTools();
    const dir = join(tempDir(), 'two-l0');
    const model: HexPair[] = [];
    const db = await DB.open(dir, { compression: 'lz4' });
    for (let t = 0; t < 2; t++) {
      for (let i = 0; i < 100; i++) {
        const key = Buffer.from(`t${t}-${String(i).padStart(3, '0')}`);
        await db.put(key, `value ${t} ${i}`);
        model.push({ key: hex(key), value: hex(Buffer.from(`value ${t} ${i}`)) });
      }
      await flushToLevel0(db);
    }
    expect(db.getProperty('sievekv.num-files-at-level0')).toBe('2');
    const copy = join(tempDir(), 'copy');
    cpSync(dir, copy, { recursive: true });
    expect(() => ldbScan(copy)).toThrow(L0_ORDER);
    const links = tempDir();
    const perTable = readdirSync(dir)
      .filter((f) => f.endsWith('.ldb'))
      .map((f) => sstDumpScan(join(dir, f), links).length);
    expect(perTable).toEqual([100, 100]);

    await db.compactRange();
    expect(db.getProperty('sievekv.num-files-at-level0')).toBe('0');
    await db.close();
    expect(ldbScan(dir)).toEqual(model.sort(byKey));
  });

  it("LevelDB's own database with three level-0 tables: ldb refuses it the same way", async () => {
    requireRocksDbTools();
    const dir = join(tempDir(), 'leveldb-l0');
    const ldb = new ClassicLevel<string, string>(dir, { writeBufferSize: 16 * 1024 });
    for (let r = 0; r < 3; r++) {
      await ldb.open();
      for (let i = 0; i < 300; i++) await ldb.put(`k${r}-${i}`, 'x'.repeat(40));
      await ldb.close(); // LevelDB writes the replayed WAL to a level-0 table at the next open
    }
    await ldb.open();
    await ldb.close();
    expect(readdirSync(dir).filter((f) => f.endsWith('.ldb')).length).toBeGreaterThanOrEqual(2);
    expect(() => ldbScan(dir)).toThrow(L0_ORDER);
  });
});
