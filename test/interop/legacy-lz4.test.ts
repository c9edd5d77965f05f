/**
 * LZ4 tables sievekv wrote before they got RocksDB's footer (test/fixtures/sievekv-lz4-leveldb-footer,
 * made at f5b0322 by make-legacy-lz4-fixture.ts): LevelDB's 48-byte footer over varint32-framed
 * LZ4 blocks. sievekv reads them exactly; RocksDB cannot (under LevelDB's magic it expects its
 * format_version 0 framing); once sievekv's compaction has rewritten them, RocksDB reads all.
 */
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { Table } from '../../src/sstable/table.js';
import { TableInspector } from '../../src/tools/table-inspector.js';
import { fixturePath, readJsonLines } from '../support/fixtures.js';
import { ldbScan, requireRocksDbTools } from './rocksdb-tools.js';

const FIXTURE = 'sievekv-lz4-leveldb-footer';
const temp: string[] = [];
afterAll(() => {
  for (const d of temp) rmSync(d, { recursive: true, force: true });
});

/** A copy of the fixture (opening writes to the directory: never open the original). */
function copyFixture(): string {
  const parent = mkdtempSync(join(tmpdir(), 'sievekv-legacy-'));
  temp.push(parent);
  const dir = join(parent, 'db');
  cpSync(fixturePath(FIXTURE), dir, { recursive: true });
  return dir;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** Footer format and LZ4-compressed data blocks of every table in `dir`. */
function footers(dir: string): { format: string; lz4Blocks: number }[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.ldb'))
    .map((f) => {
      const inspector = TableInspector.open(new NodeFileSystem(), join(dir, f));
      try {
        const insp = inspector.inspect();
        expect(insp.faults).toEqual([]);
        return { format: insp.footer!.format, lz4Blocks: insp.blocks.filter((b) => b.kind === 'data' && b.compression === CompressionType.LZ4).length };
      } finally {
        inspector.close();
      }
    });
}

describe('LZ4 tables with LevelDB footer (written before RocksDB footers)', () => {
  const expected = readJsonLines<{ key: string; value: string }>(FIXTURE, 'expected.jsonl');
  const deleted = readJsonLines<{ key: string }>(FIXTURE, 'deleted.jsonl');

  it('the fixture is what it claims: LevelDB footers over LZ4-compressed blocks', () => {
    const tables = footers(fixturePath(FIXTURE));
    expect(tables.length).toBeGreaterThanOrEqual(4);
    for (const t of tables) {
      expect(t.format).toBe('leveldb');
      expect(t.lz4Blocks).toBeGreaterThan(0);
    }
  });

  it('sievekv reads them exactly: iteration, every get, deleted keys absent; compaction rewrites them with RocksDB footers', async () => {
    const dir = copyFixture();
    const db = await DB.open(dir, { createIfMissing: false, compression: 'lz4' });
    try {
      const seen: { key: string; value: string }[] = [];
      for await (const [k, v] of db.iterator()) seen.push({ key: hex(k), value: hex(v) });
      expect(seen).toEqual(expected);
      for (const { key, value } of expected) expect(db.getSync(Buffer.from(key, 'hex'))?.toString('hex')).toBe(value);
      for (const { key } of deleted) expect(db.getSync(Buffer.from(key, 'hex'))).toBeUndefined();
      await db.compactRange();
    } finally {
      await db.close();
    }
    const after = footers(dir);
    expect(after.length).toBeGreaterThan(0);
    for (const t of after) expect(t.format).toBe('rocksdb');
    const again = await DB.open(dir, { createIfMissing: false });
    try {
      const seen: { key: string; value: string }[] = [];
      for await (const [k, v] of again.iterator()) seen.push({ key: hex(k), value: hex(v) });
      expect(seen).toEqual(expected);
    } finally {
      await again.close();
    }
  });

  it('their MurmurHash3 key sketches read, and the distinct-key estimate counts their keys by them, reading no table whole', async () => {
    // Written before sievekv.keysketch2: each table carries the older sketch (sievekv.key.sketch),
    // which merges with the other old ones only; the estimate adds their count to the new ones'.
    const dir = copyFixture();
    for (const name of readdirSync(dir).filter((f) => f.endsWith('.ldb'))) {
      const table = Table.open(new NodeFileSystem(), join(dir, name));
      try {
        expect(table.properties!.keySketch).toBeUndefined();
        expect(table.properties!.murmurKeySketch!.count()).toBeGreaterThan(0);
      } finally {
        table.close();
      }
    }
    const db = await DB.open(dir, { createIfMissing: false, compression: 'lz4' });
    try {
      // Live keys plus the deleted ones still in tables (a deletion counts until compaction drops it).
      const blocksBefore = (JSON.parse(db.getProperty('sievekv.stats')!) as { blocksRead: number }).blocksRead;
      const estimate = Number(db.getProperty('sievekv.estimate-num-keys'));
      expect((JSON.parse(db.getProperty('sievekv.stats')!) as { blocksRead: number }).blocksRead).toBe(blocksBefore);
      expect(estimate).toBeGreaterThanOrEqual(expected.length * 0.97);
      expect(estimate).toBeLessThanOrEqual((expected.length + deleted.length) * 1.03);
      await db.compactRange();
      const after = Number(db.getProperty('sievekv.estimate-num-keys'));
      expect(Math.abs(after - expected.length) / expected.length).toBeLessThan(0.03);
    } finally {
      await db.close();
    }
  });

  it('RocksDB cannot read them as written; after sievekv compacts the database, ldb scan reads every key', async () => {
    requireRocksDbTools();
    const dir = copyFixture();
    expect(() => ldbScan(dir)).toThrow(/Corrupted compressed block contents: LZ4/);
    const db = await DB.open(dir, { createIfMissing: false, compression: 'lz4' });
    await db.compactRange();
    await db.close();
    expect(ldbScan(dir)).toEqual(expected);
  });
});
