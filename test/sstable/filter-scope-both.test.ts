/**
 * filterScope 'both' (the database's default): a table carries LevelDB's per-block filter block
 * and a whole-table filter; sievekv asks the whole-table one first, LevelDB uses the other.
 */
import { describe, expect, it } from 'vitest';
import { BloomFilterPolicy } from '../../src/filter/bloom.js';
import { KeyProbes } from '../../src/filter/key-probes.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { encodeInternalKey, MAX_SEQUENCE, ValueType } from '../../src/format/internal-key.js';
import { Footer } from '../../src/sstable/footer.js';
import { Block } from '../../src/sstable/block.js';
import { decodeMetaindex } from '../../src/sstable/metaindex.js';
import { GetStatus, Table, TableGetResult } from '../../src/sstable/table.js';
import { TableBuilder } from '../../src/sstable/table-builder.js';
import { CompressionType } from '../../src/sstable/compression.js';

const policy = new BloomFilterPolicy(10);
const key = (i: number): Uint8Array => new TextEncoder().encode(`key-${String(i).padStart(6, '0')}`);

function build(fs: MemFileSystem, path: string, scope: 'block' | 'table' | 'both'): void {
  const file = fs.createWritable(path);
  const b = new TableBuilder(file, { filterPolicy: policy, filterScope: scope, compression: CompressionType.NONE });
  for (let i = 0; i < 3000; i += 2) b.add(encodeInternalKey(key(i), i + 1, ValueType.VALUE), key(i));
  const props = b.finish();
  expect(props.filterScope).toBe(scope);
  file.close();
}

function metaNames(fs: MemFileSystem, path: string): string[] {
  const bytes = fs.readFile(path);
  const footer = Footer.decode(bytes);
  const h = footer.metaindexHandle;
  return [...decodeMetaindex(new Block(bytes.subarray(h.offset, h.offset + h.size))).keys()].sort();
}

describe("filterScope 'both'", () => {
  it('writes the per-block filter block and the whole-table filter under their own names', () => {
    const fs = new MemFileSystem();
    fs.mkdir('/t');
    build(fs, '/t/both.ldb', 'both');
    expect(metaNames(fs, '/t/both.ldb')).toEqual(['filter.leveldb.BuiltinBloomFilter2', 'fullfilter.leveldb.BuiltinBloomFilter2', 'sievekv.properties']);
  });

  it('answers misses from the whole-table filter and finds every key', () => {
    const fs = new MemFileSystem();
    fs.mkdir('/t');
    build(fs, '/t/both.ldb', 'both');
    const table = Table.open(fs, '/t/both.ldb', { filterPolicies: [policy] });
    expect(table.filterScope).toBe('table');
    const probes = new KeyProbes();
    const result = new TableGetResult();
    for (let i = 0; i < 3000; i++) {
      probes.reset(key(i));
      const status = table.get(encodeInternalKey(key(i), MAX_SEQUENCE, ValueType.VALUE), key(i), probes, result);
      expect(status).toBe(i % 2 === 0 ? GetStatus.FOUND : GetStatus.NOT_FOUND);
    }
    expect(table.stats.filterNegatives).toBeGreaterThan(1350); // of 1500 absent keys
    table.close();
  });

  it('a reader that knows only the per-block filter (as LevelDB) still finds and uses it', () => {
    const fs = new MemFileSystem();
    fs.mkdir('/t');
    build(fs, '/t/both.ldb', 'both');
    build(fs, '/t/block.ldb', 'block');
    // The per-block filter block of a 'both' table is byte for byte the one 'block' writes.
    const filterOf = (path: string): Uint8Array => {
      const bytes = fs.readFile(path);
      const footer = Footer.decode(bytes);
      const h = footer.metaindexHandle;
      const handle = decodeMetaindex(new Block(bytes.subarray(h.offset, h.offset + h.size))).get('filter.leveldb.BuiltinBloomFilter2')!;
      return bytes.slice(handle.offset, handle.offset + handle.size);
    };
    expect(Buffer.compare(filterOf('/t/both.ldb'), filterOf('/t/block.ldb'))).toBe(0);
  });
});
