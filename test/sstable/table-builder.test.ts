/**
 * TableBuilder: legal call order and misuse, the 1/8 compression rule, short index keys, filter
 * scopes and their metaindex names, empty tables, I/O failures, and what the reader makes of
 * filters it cannot use.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import { BloomFilterPolicy } from '../../src/filter/bloom.js';
import { KeyProbes } from '../../src/filter/key-probes.js';
import { bytewiseComparator, type Comparator } from '../../src/format/comparator.js';
import { bytewiseInternalComparator, InternalKeyComparator } from '../../src/format/internal-key-comparator.js';
import { encodeInternalKey, MAX_SEQUENCE, ValueType } from '../../src/format/internal-key.js';
import { FaultyFileSystem } from '../../src/fs/faulty-fs.js';
import { Block } from '../../src/sstable/block.js';
import { BlockBuilder } from '../../src/sstable/block-builder.js';
import { decodeBlockContents } from '../../src/sstable/block-trailer.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { BlockHandle, Footer } from '../../src/sstable/footer.js';
import { decodeMetaindex } from '../../src/sstable/metaindex.js';
import { GetStatus, Table, TableGetResult } from '../../src/sstable/table.js';
import { TableBuilder } from '../../src/sstable/table-builder.js';
import { rng, randomBytes, testSeed } from '../support/seed.js';
import { buildTable, type Entry, makeEntry, newMemFs } from './table-support.js';

const enc = new TextEncoder();
const bloom = new BloomFilterPolicy(10);

/** The data blocks of a table file: handle, stored type byte, index key. */
function dataBlocks(buf: Uint8Array): { handle: BlockHandle; type: number; indexKey: Uint8Array }[] {
  const footer = Footer.decode(buf);
  const h = footer.indexHandle;
  const it = new Block(decodeBlockContents(buf, h.offset, h.size)).newIterator(bytewiseInternalComparator);
  const out = [];
  for (it.seekToFirst(); it.valid(); it.next()) {
    const handle = BlockHandle.decode(it.data, it.valueStart, it.valueEnd);
    out.push({ handle, type: buf[handle.offset + handle.size]!, indexKey: it.key().slice() });
  }
  return out;
}

function metaNames(buf: Uint8Array): string[] {
  const f = Footer.decode(buf);
  const h = f.metaindexHandle;
  return [...decodeMetaindex(new Block(decodeBlockContents(buf, h.offset, h.size))).keys()];
}

function seqEntries(n: number, value: (i: number) => Uint8Array): Entry[] {
  return Array.from({ length: n }, (_, i) => makeEntry(enc.encode(`key-${String(i).padStart(6, '0')}`), i + 1, ValueType.VALUE, value(i)));
}

function lookup(table: Table, key: string): GetStatus {
  const k = enc.encode(key);
  const probes = new KeyProbes();
  probes.reset(k);
  return table.get(encodeInternalKey(k, MAX_SEQUENCE, ValueType.VALUE), k, probes, new TableGetResult());
}

describe('TableBuilder', () => {
  it('rejects keys out of order, repeated, too short or of a bad type, and stays usable', () => {
    const fs = newMemFs();
    const b = new TableBuilder(fs.createWritable('/db/t.ldb'));
    b.add(encodeInternalKey(enc.encode('b'), 5, ValueType.VALUE), enc.encode('x'));
    const bad = [
      encodeInternalKey(enc.encode('a'), 9, ValueType.VALUE), // smaller user key
      encodeInternalKey(enc.encode('b'), 5, ValueType.VALUE), // equal
      encodeInternalKey(enc.encode('b'), 6, ValueType.VALUE), // newer version after older
      new Uint8Array(7),
      (() => {
        const k = encodeInternalKey(enc.encode('c'), 1, ValueType.VALUE);
        k[k.length - 8] = 9;
        return k;
      })(),
    ];
    for (const key of bad) expect(() => b.add(key, new Uint8Array(0))).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    b.add(encodeInternalKey(enc.encode('b'), 4, ValueType.DELETION), new Uint8Array(0));
    expect(b.numEntries).toBe(2);
    b.finish();
    expect(() => b.add(encodeInternalKey(enc.encode('z'), 1, ValueType.VALUE), new Uint8Array(0))).toThrow(/after finish/);
    expect(() => b.finish()).toThrow(/after finish/);
    expect(b.fileSize).toBe(fs.size('/db/t.ldb'));
    expect(b.smallestKey).toEqual(encodeInternalKey(enc.encode('b'), 5, ValueType.VALUE));
    expect(b.largestKey).toEqual(encodeInternalKey(enc.encode('b'), 4, ValueType.DELETION));
  });

  it('takes and refuses keys by internal-key order, bytewise or through any comparator; its blocks are BlockBuilder.add\'s', () => {
    // The default comparator compares through the prefix each key shares with the last one; any
    // other goes through its compare(): a bytewise one of another identity must take and refuse
    // the same keys and write the same file, a reverse one its own order. Keys from a small
    // alphabet (0x00 and 0x01 equal a trailer's first byte, 0xff is above any), often behind a
    // common prefix of 60-140 bytes (the builders' 64-byte last-key buffers grow), so user keys are
    // often equal or prefixes of one another; sequences up to 2^53 - 1 change the trailer's last
    // byte. Each run offers mostly ascending keys, and some out of order.
    const asObject: Comparator = {
      name: bytewiseComparator.name,
      compare: (a, as, ae, b, bs, be) => bytewiseComparator.compare(a, as, ae, b, bs, be),
      findShortestSeparator: (a, b) => bytewiseComparator.findShortestSeparator(a, b),
      findShortSuccessor: (k) => bytewiseComparator.findShortSuccessor(k),
    };
    const reverse: Comparator = {
      name: 'test.ReverseBytewise',
      compare: (a, as, ae, b, bs, be) => bytewiseComparator.compare(b, bs, be, a, as, ae),
      findShortestSeparator: (a) => a,
      findShortSuccessor: (k) => k,
    };
    const keyArb = fc.record({
      prefix: fc.constantFrom(0, 0, 60, 140),
      user: fc.array(fc.constantFrom(0x00, 0x01, 0x61, 0x62, 0xff), { maxLength: 6 }),
      seq: fc.constantFrom(0, 1, 2, 3, 2 ** 48, 2 ** 48 + 1, 2 ** 50 + 3, 2 ** 53 - 1),
      type: fc.constantFrom(ValueType.VALUE, ValueType.DELETION),
      probe: fc.integer({ min: 0, max: 9 }), // 0: offered as it comes; else in the sorted run
    });
    const builders = [
      { name: 'bytewise', comparator: bytewiseInternalComparator },
      { name: 'bytewise object', comparator: new InternalKeyComparator(asObject) },
      { name: 'reverse', comparator: new InternalKeyComparator(reverse) },
    ];
    fc.assert(
      fc.property(fc.array(keyArb, { minLength: 1, maxLength: 150 }), fc.integer({ min: 1, max: 4 }), (raw, restartInterval) => {
        const keys = raw.map((k) => ({ probe: k.probe === 0, key: encodeInternalKey(Uint8Array.from([...new Array<number>(k.prefix).fill(0x61), ...k.user]), k.seq, k.type) }));
        const files: Uint8Array[] = [];
        for (const { name, comparator } of builders) {
          // The sorted run in this comparator's order, the probes where they came.
          const sorted = keys.filter((k) => !k.probe).map((k) => k.key).sort((a, b) => comparator.compare(a, 0, a.length, b, 0, b.length));
          let next = 0;
          const offered = keys.map((k) => (k.probe ? k.key : sorted[next++]!));
          const fs = newMemFs();
          const options = { blockSize: 64, blockRestartInterval: restartInterval, compression: CompressionType.NONE, comparator };
          const b = new TableBuilder(fs.createWritable(`/db/${name}.ldb`), options);
          const taken: Uint8Array[] = [];
          for (const key of offered) {
            const last = taken[taken.length - 1];
            const expected = last === undefined || comparator.compare(key, 0, key.length, last, 0, last.length) > 0;
            let outcome = 'taken';
            try {
              b.add(key, key.subarray(0, 3));
            } catch (err) {
              expect(isSieveError(err, 'INVALID_ARGUMENT')).toBe(true);
              outcome = 'refused';
            }
            expect({ name, outcome }).toEqual({ name, outcome: expected ? 'taken' : 'refused' });
            if (expected) taken.push(key);
            if (taken.length > 0) expect(b.largestKey).toEqual(taken[taken.length - 1]);
          }
          b.finish();
          const file = fs.readFile(`/db/${name}.ldb`);
          files.push(file);
          // Every data block is what BlockBuilder.add lays out for its entries, and they are the keys taken.
          const entries: Uint8Array[] = [];
          for (const { handle } of dataBlocks(file)) {
            const contents = decodeBlockContents(file, handle.offset, handle.size);
            const reference = new BlockBuilder(restartInterval);
            const it = new Block(contents).newIterator(comparator);
            for (it.seekToFirst(); it.valid(); it.next()) {
              const key = it.key().slice();
              reference.add(key, it.value().slice());
              entries.push(key);
            }
            expect(Buffer.from(reference.finish()).equals(contents)).toBe(true);
          }
          expect(entries).toEqual(taken);
        }
        expect(Buffer.from(files[0]!).equals(files[1]!)).toBe(true);
      }),
      { seed: testSeed(), numRuns: 150 },
    );
  });

  it('abandon stops it; bad options are INVALID_ARGUMENT', () => {
    const fs = newMemFs();
    const b = new TableBuilder(fs.createWritable('/db/t.ldb'));
    b.abandon();
    expect(() => b.add(encodeInternalKey(enc.encode('a'), 1, ValueType.VALUE), new Uint8Array(0))).toThrow(/after abandon/);
    const w = fs.createWritable('/db/u.ldb');
    expect(() => new TableBuilder(w, { blockSize: 0 })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    expect(() => new TableBuilder(w, { compression: 2 as CompressionType })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    expect(() => new TableBuilder(w, { filterScope: 'file' as 'table' })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    expect(() => new TableBuilder(w, { blockRestartInterval: 0 })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });

  it('a failed write fails the builder: the same error on every later call', () => {
    const fs = new FaultyFileSystem(newMemFs());
    // The builder appends in 256 KiB runs: ~800 KiB of blocks make the second append fail mid-table.
    fs.inject({ ops: ['append'], after: 1 });
    const b = new TableBuilder(fs.createWritable('/db/t.ldb'), { blockSize: 64, compression: CompressionType.NONE });
    let first: unknown;
    let added = 0;
    try {
      for (const e of seqEntries(12_000, () => new Uint8Array(50))) {
        b.add(e.key, e.value);
        added++;
      }
      b.finish();
    } catch (err) {
      first = err;
    }
    expect(isSieveError(first, 'IO_ERROR')).toBe(true);
    expect(added).toBeLessThan(12_000); // it failed in an add, not in finish
    expect(() => b.add(encodeInternalKey(enc.encode('zzz'), 1, ValueType.VALUE), new Uint8Array(0))).toThrow(first as Error);
    expect(() => b.finish()).toThrow(first as Error);
  });

  it('keeps a compressed block only if it saves at least 1/8', () => {
    const next = rng(testSeed());
    for (const compression of [CompressionType.SNAPPY, CompressionType.LZ4]) {
      const fs = newMemFs();
      buildTable(fs, '/db/random.ldb', seqEntries(200, () => randomBytes(next, 100)), { compression });
      expect(dataBlocks(fs.readFile('/db/random.ldb')).every((b) => b.type === CompressionType.NONE)).toBe(true);
      buildTable(fs, '/db/text.ldb', seqEntries(200, (i) => enc.encode(`value ${i % 10} `.repeat(10))), { compression });
      expect(dataBlocks(fs.readFile('/db/text.ldb')).every((b) => b.type === compression)).toBe(true);
    }
    const fs = newMemFs();
    buildTable(fs, '/db/none.ldb', seqEntries(200, (i) => enc.encode(`value ${i % 10} `.repeat(10))), { compression: CompressionType.NONE });
    expect(dataBlocks(fs.readFile('/db/none.ldb')).every((b) => b.type === CompressionType.NONE)).toBe(true);
  });

  it('cuts blocks at blockSize and writes short separator index keys', () => {
    const fs = newMemFs();
    const long = (i: number): Uint8Array => enc.encode(`${String.fromCharCode(97 + (i % 26))}${String(i).padStart(5, '0')}-${'x'.repeat(40)}`);
    const entries = Array.from({ length: 260 }, (_, i) => i)
      .map((i) => long(i))
      .sort(Buffer.compare)
      .map((k, i) => makeEntry(k, i + 1, ValueType.VALUE, new Uint8Array(30)));
    const props = buildTable(fs, '/db/t.ldb', entries, { blockSize: 512, compression: CompressionType.NONE });
    const blocks = dataBlocks(fs.readFile('/db/t.ldb'));
    expect(blocks.length).toBe(props.numDataBlocks);
    expect(blocks.length).toBeGreaterThan(20);
    for (const b of blocks.slice(0, -1)) {
      expect(b.handle.size).toBeGreaterThanOrEqual(512);
      expect(b.handle.size).toBeLessThan(512 + 200);
    }
    // Keys are 47 + 8 bytes. A separator is short where a shorter key fits between the blocks
    // (the first differing byte can be incremented and stay below the next block's); otherwise
    // it is the block's last key, as in LevelDB (whose bytes the fixture test repeats).
    const short = blocks.filter((b) => b.indexKey.length <= 8 + 6);
    expect(short.length).toBeGreaterThan(blocks.length / 3);
    for (const b of blocks) expect([8 + 1, 8 + 5, 8 + 6, 8 + 47]).toContain(b.indexKey.length);
    expect(blocks[blocks.length - 1]!.indexKey.length).toBe(1 + 8); // short successor: one byte
  });

  it('an empty table opens, iterates nothing and finds nothing', () => {
    const fs = newMemFs();
    const props = buildTable(fs, '/db/t.ldb', [], { filterPolicy: bloom });
    expect(props).toMatchObject({ numEntries: 0, numDataBlocks: 0, smallestSequence: 0, largestSequence: 0 });
    const table = Table.open(fs, '/db/t.ldb', { filterPolicies: [bloom] });
    const it = table.newIterator();
    it.seekToFirst();
    expect(it.valid()).toBe(false);
    it.seekToLast();
    expect(it.valid()).toBe(false);
    expect(lookup(table, 'a')).toBe(GetStatus.NOT_FOUND);
    expect(table.approximateOffsetOf(encodeInternalKey(enc.encode('a'), 1, 1))).toBe(0);
  });

  it('names the filter filter.<name> per block and fullfilter.<name> per table', () => {
    const fs = newMemFs();
    const entries = seqEntries(1000, (i) => enc.encode(`v${i}`));
    buildTable(fs, '/db/block.ldb', entries, { filterPolicy: bloom, compression: CompressionType.SNAPPY });
    buildTable(fs, '/db/table.ldb', entries, { filterPolicy: bloom, filterScope: 'table' });
    buildTable(fs, '/db/none.ldb', entries, {});
    expect(metaNames(fs.readFile('/db/block.ldb'))).toEqual(['filter.leveldb.BuiltinBloomFilter2', 'sievekv.properties']);
    expect(metaNames(fs.readFile('/db/table.ldb'))).toEqual(['fullfilter.leveldb.BuiltinBloomFilter2', 'sievekv.properties']);
    expect(metaNames(fs.readFile('/db/none.ldb'))).toEqual(['sievekv.properties']);
  });

  it('a full-table filter answers before the index: absent keys read no block', () => {
    const fs = newMemFs();
    buildTable(fs, '/db/t.ldb', seqEntries(5000, (i) => enc.encode(`v${i}`)), { filterPolicy: bloom, filterScope: 'table' });
    // Matched by name: any instance of the policy reads its filters (Bloom stores k in each).
    const reader = new BloomFilterPolicy(3);
    const table = Table.open(fs, '/db/t.ldb', { filterPolicies: [reader, bloom] });
    expect(table.filterScope).toBe('table');
    expect(table.filterPolicy).toBe(reader);
    for (let i = 0; i < 2000; i++) expect(lookup(table, `absent-${i}`)).toBe(GetStatus.NOT_FOUND);
    const s = table.stats;
    expect(s.filterChecks).toBe(2000);
    expect(s.filterNegatives).toBeGreaterThan(1950);
    expect(s.blocksRead).toBe(s.filterFalsePositives); // each false positive read one block, nothing else did
    for (let i = 0; i < 5000; i += 97) expect(lookup(table, `key-${String(i).padStart(6, '0')}`)).toBe(GetStatus.FOUND);
  });

  it('a filter of an unknown policy is skipped; lookups stay right', () => {
    const fs = newMemFs();
    buildTable(fs, '/db/t.ldb', seqEntries(500, (i) => enc.encode(`v${i}`)), { filterPolicy: bloom, filterScope: 'table' });
    const other = { ...bloom, name: 'some.OtherFilter', newProbe: () => bloom.newProbe(), createFilter: (k: readonly Uint8Array[]) => bloom.createFilter(k), keyMayMatch: bloom.keyMayMatch };
    const table = Table.open(fs, '/db/t.ldb', { filterPolicies: [other] });
    expect(table.filterPolicyName).toBe('leveldb.BuiltinBloomFilter2');
    expect(table.filterScope).toBe('table');
    expect(table.filterPolicy).toBeUndefined();
    expect(lookup(table, 'key-000042')).toBe(GetStatus.FOUND);
    expect(lookup(table, 'nope')).toBe(GetStatus.NOT_FOUND);
    expect(table.stats.filterChecks).toBe(0);
  });

  it('counts filter checks = negatives + false positives + keys the table holds', () => {
    const fs = newMemFs();
    const weak = new BloomFilterPolicy(2);
    buildTable(fs, '/db/t.ldb', seqEntries(2000, (i) => enc.encode(`v${i}`)), { filterPolicy: weak, blockSize: 1024 });
    const table = Table.open(fs, '/db/t.ldb', { filterPolicies: [weak] });
    let present = 0;
    for (let i = 0; i < 4000; i += 3) {
      if (lookup(table, `key-${String(i).padStart(6, '0')}`) === GetStatus.FOUND) present++;
    }
    const s = table.stats;
    expect(present).toBe(667);
    expect(s.filterFalsePositives).toBeGreaterThan(0);
    expect(s.filterNegatives).toBeGreaterThan(0);
    expect(s.filterChecks).toBe(s.filterNegatives + s.filterFalsePositives + present);
    expect(s.blocksRead).toBe(s.filterFalsePositives + present);
  });

  it('one lookup across several tables hashes the key once per policy', () => {
    let hashes = 0;
    const counted = {
      name: bloom.name,
      createFilter: (keys: readonly Uint8Array[]) => bloom.createFilter(keys),
      keyMayMatch: (key: Uint8Array, filter: Uint8Array) => bloom.keyMayMatch(key, filter),
      newProbe: () => {
        const probe = bloom.newProbe();
        return {
          setKey: (key: Uint8Array) => {
            hashes++;
            probe.setKey(key);
          },
          mayMatch: (f: Uint8Array, s?: number, e?: number) => probe.mayMatch(f, s, e),
        };
      },
    };
    const fs = newMemFs();
    const tables = (['block', 'table', 'block'] as const).map((filterScope, i) => {
      buildTable(fs, `/db/${i}.ldb`, seqEntries(300, (j) => enc.encode(`v${j}`)), { filterPolicy: bloom, filterScope });
      return Table.open(fs, `/db/${i}.ldb`, { filterPolicies: [counted] });
    });
    const probes = new KeyProbes();
    const result = new TableGetResult();
    for (const key of ['key-000007', 'absent']) {
      const k = enc.encode(key);
      probes.reset(k);
      for (const t of tables) t.get(encodeInternalKey(k, MAX_SEQUENCE, ValueType.VALUE), k, probes, result);
    }
    expect(tables.every((t) => t.stats.filterChecks === 2)).toBe(true);
    expect(hashes).toBe(2);
  });

  it('Table.open of a closed table throws CLOSED after close', () => {
    const fs = newMemFs();
    buildTable(fs, '/db/t.ldb', seqEntries(10, () => new Uint8Array(1)), {});
    const table = Table.open(fs, '/db/t.ldb');
    table.close();
    table.close();
    expect(() => lookup(table, 'key-000001')).toThrow(expect.objectContaining({ code: 'CLOSED' }));
    expect(() => table.newIterator()).toThrow(expect.objectContaining({ code: 'CLOSED' }));
  });
});
