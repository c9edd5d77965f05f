/**
 * LevelDB-made tables (test/fixtures, LevelDB 1.20, Bloom 10 bits/key) through Table, TableIterator
 * and get, opened through the FileSystem seam (NodeFileSystem, read-only); and tables rebuilt from
 * their entries by TableBuilder, which must repeat LevelDB's bytes: data blocks, filter block and
 * index block identical, the properties block an extra metaindex entry.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BloomFilterPolicy } from '../../src/filter/bloom.js';
import { KeyProbes } from '../../src/filter/key-probes.js';
import { bytewiseInternalComparator } from '../../src/format/internal-key-comparator.js';
import { encodeInternalKey, MAX_SEQUENCE, readSequence, readValueType, ValueType } from '../../src/format/internal-key.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';
import { Block } from '../../src/sstable/block.js';
import { BLOCK_TRAILER_SIZE, decodeBlockContents } from '../../src/sstable/block-trailer.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { BlockHandle, Footer } from '../../src/sstable/footer.js';
import { decodeMetaindex } from '../../src/sstable/metaindex.js';
import { GetStatus, Table, TableGetResult } from '../../src/sstable/table.js';
import { rng, testSeed } from '../support/seed.js';
import { fixturePath, readJsonLines } from '../support/fixtures.js';
import { buildTable, fromHex, hex, internalCompare, makeEntry, newMemFs, type Entry } from './table-support.js';

const nodeFs = new NodeFileSystem();
const bloom = new BloomFilterPolicy(10);

interface RawEntry {
  key: Uint8Array;
  value: Uint8Array;
}

/** An independent parse of a table with the block layer only: footer → index → data blocks. */
function parseBlocks(buf: Uint8Array): { entries: RawEntry[]; footer: Footer } {
  const footer = Footer.decode(buf);
  const block = (h: BlockHandle): Block => new Block(decodeBlockContents(buf, h.offset, h.size));
  const entries: RawEntry[] = [];
  const index = block(footer.indexHandle).newIterator(bytewiseInternalComparator);
  for (index.seekToFirst(); index.valid(); index.next()) {
    const data = block(BlockHandle.decode(index.data, index.valueStart, index.valueEnd)).newIterator(bytewiseInternalComparator);
    for (data.seekToFirst(); data.valid(); data.next()) entries.push({ key: data.key().slice(), value: data.value().slice() });
  }
  return { entries, footer };
}

function readAll(table: Table): RawEntry[] {
  const out: RawEntry[] = [];
  const it = table.newIterator();
  for (it.seekToFirst(); it.valid(); it.next()) out.push({ key: it.key().slice(), value: it.value().slice() });
  it.close();
  return out;
}

function lookup(table: Table, userKey: Uint8Array, seq = MAX_SEQUENCE): { status: GetStatus; value: string } {
  const probes = new KeyProbes();
  const result = new TableGetResult();
  probes.reset(userKey);
  const status = table.get(encodeInternalKey(userKey, seq, ValueType.VALUE), userKey, probes, result);
  return { status, value: hex(result.value) };
}

const userKeyOf = (k: Uint8Array): Uint8Array => k.subarray(0, k.length - 8);

/** Random user keys that no fixture holds (a prefix byte no generator key starts with is not assumed). */
function randomAbsentKeys(n: number, taken: Set<string>): Uint8Array[] {
  const next = rng(testSeed());
  const out: Uint8Array[] = [];
  while (out.length < n) {
    const k = new Uint8Array(4 + Math.floor(next() * 20));
    for (let i = 0; i < k.length; i++) k[i] = Math.floor(next() * 256);
    if (!taken.has(hex(k))) out.push(k);
  }
  return out;
}

describe('ldb-small-nocomp/000012.ldb', () => {
  const path = fixturePath('ldb-small-nocomp', '000012.ldb');
  const expected = readJsonLines<{ key: string; value: string }>('ldb-small-nocomp', 'expected.jsonl');
  const deleted = readJsonLines<{ key: string }>('ldb-small-nocomp', 'deleted.jsonl');

  for (const policies of [[bloom], []]) {
    const label = policies.length > 0 ? 'with the Bloom policy (filter used)' : 'with no policy (no filter, still correct)';
    it(`holds exactly expected.jsonl, ${label}`, () => {
      const table = Table.open(nodeFs, path, { filterPolicies: policies });
      expect(table.filterPolicyName).toBe('leveldb.BuiltinBloomFilter2');
      expect(table.filterScope).toBe('block');
      expect(table.filterPolicy).toBe(policies[0]);
      expect(table.properties).toBeUndefined();

      const entries = readAll(table);
      expect(entries.map((e) => hex(userKeyOf(e.key)))).toEqual(expected.map((e) => e.key));
      expect(entries.map((e) => hex(e.value))).toEqual(expected.map((e) => e.value));
      expect(entries.every((e) => readValueType(e.key, e.key.length) === ValueType.VALUE)).toBe(true);
      const back: string[] = [];
      const it = table.newIterator();
      for (it.seekToLast(); it.valid(); it.prev()) back.push(hex(it.key()));
      expect(back).toEqual(entries.map((e) => hex(e.key)).reverse());

      for (const e of expected) expect(lookup(table, fromHex(e.key))).toEqual({ status: GetStatus.FOUND, value: e.value });
      // Older than the entry: not visible.
      for (const e of entries.slice(0, 50)) {
        const seq = readSequence(e.key, e.key.length);
        expect(lookup(table, userKeyOf(e.key), seq - 1).status).toBe(GetStatus.NOT_FOUND);
      }

      const taken = new Set(expected.map((e) => e.key));
      const absent = [...deleted.map((d) => fromHex(d.key)), ...randomAbsentKeys(2000, taken)];
      const before = { ...table.stats };
      for (const k of absent) expect(lookup(table, k).status).toBe(GetStatus.NOT_FOUND);
      const negatives = table.stats.filterNegatives - before.filterNegatives;
      if (policies.length > 0) {
        expect(table.stats.filterChecks - before.filterChecks).toBeGreaterThan(0.95 * absent.length);
        expect(negatives).toBeGreaterThan(0.9 * absent.length);
        expect(table.stats.blocksRead - before.blocksRead).toBeLessThan(0.1 * absent.length);
        expect(table.stats.filterFalsePositives - before.filterFalsePositives).toBe(
          table.stats.filterChecks - before.filterChecks - negatives,
        );
      } else {
        expect(table.stats.filterChecks).toBe(0);
      }
      table.close();
    });
  }
});

describe('ldb-snappy-small tables', () => {
  const files = ['000012.ldb', '000025.ldb', '000027.ldb'];
  const expected = readJsonLines<{ key: string; value: string }>('ldb-snappy-small', 'expected.jsonl');
  const deleted = readJsonLines<{ key: string }>('ldb-snappy-small', 'deleted.jsonl');
  const dbKeys = [...expected.map((e) => e.key), ...deleted.map((d) => d.key)];

  it('read entry for entry as the block layer parses them; gets agree with the iteration', () => {
    let deletions = 0;
    let shadowed = 0;
    let expectedKeysFound = 0;
    for (const f of files) {
      const path = fixturePath('ldb-snappy-small', f);
      const table = Table.open(nodeFs, path, { filterPolicies: [bloom] });
      expect(table.filterPolicy).toBe(bloom);
      const entries = readAll(table);
      const parsed = parseBlocks(new Uint8Array(readFileSync(path))).entries;
      expect(entries.length).toBe(parsed.length);
      expect(entries.map((e) => hex(e.key) + ':' + hex(e.value))).toEqual(parsed.map((e) => hex(e.key) + ':' + hex(e.value)));
      for (let i = 1; i < entries.length; i++) expect(internalCompare(entries[i - 1]!.key, entries[i]!.key)).toBeLessThan(0);

      // The model: per user key, its versions newest first.
      const versions = new Map<string, RawEntry[]>();
      for (const e of entries) {
        const u = hex(userKeyOf(e.key));
        if (readValueType(e.key, e.key.length) === ValueType.DELETION) deletions++;
        const list = versions.get(u);
        if (list) {
          list.push(e);
          shadowed++;
        } else versions.set(u, [e]);
      }
      for (const [u, list] of versions) {
        const newest = list[0]!;
        const got = lookup(table, fromHex(u));
        if (readValueType(newest.key, newest.key.length) === ValueType.DELETION) expect(got.status).toBe(GetStatus.DELETED);
        else expect(got).toEqual({ status: GetStatus.FOUND, value: hex(newest.value) });
        // Each older version is what a lookup just below the newer one's sequence sees.
        for (let i = 1; i < list.length; i++) {
          const older = list[i]!;
          const seq = readSequence(list[i - 1]!.key, list[i - 1]!.key.length) - 1;
          const atOlder = lookup(table, fromHex(u), seq);
          expect(atOlder.status).toBe(readValueType(older.key, older.key.length) === ValueType.DELETION ? GetStatus.DELETED : GetStatus.FOUND);
        }
      }
      // Keys of the database this table does not hold: NOT_FOUND, mostly without a block read.
      const before = { ...table.stats };
      let absent = 0;
      for (const k of dbKeys) {
        if (versions.has(k)) {
          expectedKeysFound++;
          continue;
        }
        absent++;
        expect(lookup(table, fromHex(k)).status).toBe(GetStatus.NOT_FOUND);
      }
      expect(table.stats.filterNegatives - before.filterNegatives).toBeGreaterThan(0.9 * absent);
      table.close();
    }
    expect(deletions).toBeGreaterThan(0);
    expect(shadowed).toBeGreaterThan(0);
    expect(expectedKeysFound).toBeGreaterThan(0);
  });
});

describe('TableBuilder repeats LevelDB\'s bytes', () => {
  const cases = [
    ['ldb-small-nocomp', '000012.ldb', CompressionType.NONE],
    ['ldb-snappy-small', '000012.ldb', CompressionType.SNAPPY],
    ['ldb-snappy-small', '000025.ldb', CompressionType.SNAPPY],
    ['ldb-snappy-small', '000027.ldb', CompressionType.SNAPPY],
  ] as const;
  for (const [dir, file, compression] of cases) {
    it(`${dir}/${file}: data, filter and index blocks byte for byte`, () => {
      const theirs = new Uint8Array(readFileSync(fixturePath(dir, file)));
      const { entries: raw, footer } = parseBlocks(theirs);
      const entries: Entry[] = raw.map((e) => {
        const u = userKeyOf(e.key);
        return makeEntry(u, readSequence(e.key, e.key.length), readValueType(e.key, e.key.length) as ValueType, e.value);
      });
      const fs = newMemFs();
      buildTable(fs, '/db/t.ldb', entries, { compression, filterPolicy: bloom, blockSize: 4096, blockRestartInterval: 16 });
      const ours = fs.readFile('/db/t.ldb');

      const metaBlock = (buf: Uint8Array, f: Footer): Map<string, BlockHandle> =>
        decodeMetaindex(new Block(decodeBlockContents(buf, f.metaindexHandle.offset, f.metaindexHandle.size)));
      const theirMeta = metaBlock(theirs, footer);
      const ourFooter = Footer.decode(ours);
      const ourMeta = metaBlock(ours, ourFooter);
      expect([...theirMeta.keys()]).toEqual(['filter.leveldb.BuiltinBloomFilter2']);
      expect([...ourMeta.keys()]).toEqual(['filter.leveldb.BuiltinBloomFilter2', 'sievekv.properties']);
      // Everything up to the end of the filter block is identical.
      const filter = theirMeta.get('filter.leveldb.BuiltinBloomFilter2')!;
      expect(ourMeta.get('filter.leveldb.BuiltinBloomFilter2')).toEqual(filter);
      const filterEnd = filter.offset + filter.size + BLOCK_TRAILER_SIZE;
      expect(Buffer.compare(ours.subarray(0, filterEnd), theirs.subarray(0, filterEnd))).toBe(0);
      // The index block, stored (compressed or not) with its trailer, is identical too.
      const stored = (buf: Uint8Array, h: BlockHandle): Uint8Array => buf.subarray(h.offset, h.offset + h.size + BLOCK_TRAILER_SIZE);
      expect(hex(stored(ours, ourFooter.indexHandle))).toBe(hex(stored(theirs, footer.indexHandle)));
      // And our table reads back the same entries.
      const table = Table.open(fs, '/db/t.ldb', { filterPolicies: [bloom] });
      expect(readAll(table).length).toBe(raw.length);
      expect(table.properties?.numEntries).toBe(raw.length);
      table.close();
    });
  }
});
