/**
 * The properties block: encode/decode round trip, unknown names ignored and absent ones
 * defaulted, malformed values CORRUPTION, and the values a built table records (checked against
 * the file's own layout and the entries), including the mergeable HyperLogLog of user keys.
 */
import { describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import { BloomFilterPolicy } from '../../src/filter/bloom.js';
import { HyperLogLog } from '../../src/filter/hyperloglog.js';
import { bytewiseInternalComparator } from '../../src/format/internal-key-comparator.js';
import { ValueType } from '../../src/format/internal-key.js';
import { Block } from '../../src/sstable/block.js';
import { BlockBuilder } from '../../src/sstable/block-builder.js';
import { decodeBlockContents } from '../../src/sstable/block-trailer.js';
import { BlockHandle, Footer } from '../../src/sstable/footer.js';
import { decodeMetaindex } from '../../src/sstable/metaindex.js';
import { Table } from '../../src/sstable/table.js';
import {
  decodeTableProperties,
  emptyTableProperties,
  encodeTableProperties,
  KEY_SKETCH_PRECISION,
  PropertyName,
  type TableProperties,
} from '../../src/sstable/table-properties.js';
import { buildTable, type Entry, makeEntry, newMemFs, sortEntries } from './table-support.js';

const enc = new TextEncoder();

function blockOf(pairs: [string, Uint8Array][]): Block {
  const b = new BlockBuilder(1);
  for (const [k, v] of pairs.sort((x, y) => (x[0] < y[0] ? -1 : 1))) b.add(enc.encode(k), v);
  return new Block(b.finish().slice(), 'props.ldb', 1234);
}

describe('table properties', () => {
  it('round-trips every field', () => {
    const sketch = new HyperLogLog(KEY_SKETCH_PRECISION);
    for (let i = 0; i < 1000; i++) sketch.add(`k${i}`);
    const props: TableProperties = {
      numEntries: 1,
      numDeletions: 2,
      numUserKeys: 3,
      rawKeySize: 4,
      rawValueSize: 2 ** 40,
      dataSize: 6,
      indexSize: 7,
      filterSize: 8,
      numDataBlocks: 9,
      smallestSequence: 10,
      largestSequence: Number.MAX_SAFE_INTEGER,
      filterPolicy: 'sievekv.Ribbon1',
      filterScope: 'table',
      compression: 'lz4',
      keySketch: sketch,
    };
    const decoded = decodeTableProperties(new Block(encodeTableProperties(props)));
    expect({ ...decoded, keySketch: undefined }).toEqual({ ...props, keySketch: undefined });
    expect(decoded.keySketch!.serialize()).toEqual(sketch.serialize());
  });

  it('ignores unknown names and defaults absent ones', () => {
    const props = decodeTableProperties(
      blockOf([
        ['aaa.from.the.future', enc.encode('?')],
        [PropertyName.NUM_ENTRIES, new Uint8Array([5])],
        ['sievekv.zzz', new Uint8Array([0xff, 0xff])],
        [PropertyName.COMPRESSION, enc.encode('snappy')],
      ]),
    );
    expect(props).toEqual({ ...emptyTableProperties(), numEntries: 5, compression: 'snappy' });
  });

  it('a malformed known value is CORRUPTION naming the file', () => {
    const bad: [string, Uint8Array][] = [
      [PropertyName.NUM_ENTRIES, new Uint8Array([0x80])], // truncated varint
      [PropertyName.NUM_ENTRIES, new Uint8Array([1, 2])], // trailing bytes
      [PropertyName.FILTER_SCOPE, enc.encode('file')],
      [PropertyName.FILTER_POLICY, new Uint8Array([0xc3])], // not UTF-8
      [PropertyName.KEY_SKETCH, enc.encode('not a sketch')],
    ];
    for (const pair of bad) {
      try {
        decodeTableProperties(blockOf([pair]));
        expect.unreachable(pair[0]);
      } catch (err) {
        expect(isSieveError(err, 'CORRUPTION')).toBe(true);
        expect((err as { file?: string }).file).toBe('props.ldb');
      }
    }
  });

  it('a built table records its counts, sizes, sequences and a sketch of its user keys', () => {
    const entries: Entry[] = [];
    for (let i = 0; i < 20_000; i++) {
      const k = enc.encode(`user-${i}`);
      entries.push(makeEntry(k, 1000 + i, i % 10 === 0 ? ValueType.DELETION : ValueType.VALUE, enc.encode(`v${i}`)));
      if (i % 4 === 0) entries.push(makeEntry(k, 7 + (i % 3), ValueType.VALUE, enc.encode(`old ${i}`)));
    }
    sortEntries(entries);
    const fs = newMemFs();
    const policy = new BloomFilterPolicy(10);
    const written = buildTable(fs, '/db/t.ldb', entries, { filterPolicy: policy });
    const table = Table.open(fs, '/db/t.ldb', { filterPolicies: [policy] });
    const props = table.properties!;
    expect(props).toMatchObject({
      numEntries: entries.length,
      numDeletions: 2000,
      numUserKeys: 20_000,
      rawKeySize: entries.reduce((s, e) => s + e.key.length, 0),
      rawValueSize: entries.reduce((s, e) => s + e.value.length, 0),
      smallestSequence: 7,
      largestSequence: 1000 + 19_999,
      filterPolicy: 'leveldb.BuiltinBloomFilter2',
      filterScope: 'block',
      compression: 'lz4',
    });
    expect({ ...written, keySketch: undefined }).toEqual({ ...props, keySketch: undefined });

    // Sizes, against the file's own layout.
    const buf = fs.readFile('/db/t.ldb');
    const footer = Footer.decode(buf);
    const meta = decodeMetaindex(new Block(decodeBlockContents(buf, footer.metaindexHandle.offset, footer.metaindexHandle.size)));
    const filter = meta.get('filter.leveldb.BuiltinBloomFilter2')!;
    expect(props.filterSize).toBe(filter.size + 5);
    expect(props.indexSize).toBe(footer.indexHandle.size + 5);
    expect(props.dataSize).toBe(filter.offset); // the data blocks end where the filter begins
    const index = new Block(decodeBlockContents(buf, footer.indexHandle.offset, footer.indexHandle.size)).newIterator(
      bytewiseInternalComparator,
    );
    let blocks = 0;
    let last = new BlockHandle();
    for (index.seekToFirst(); index.valid(); index.next()) {
      blocks++;
      last = BlockHandle.decode(index.data, index.valueStart, index.valueEnd);
    }
    expect(props.numDataBlocks).toBe(blocks);
    expect(last.offset + last.size + 5).toBe(props.dataSize);

    // The sketch: 1.6% standard error at p = 12; allow 4 standard errors.
    const sketch = props.keySketch!;
    expect(sketch.precision).toBe(KEY_SKETCH_PRECISION);
    expect(Math.abs(sketch.count() - 20_000) / 20_000).toBeLessThan(4 * sketch.standardError);
  });

  it('sketches of two tables merge into an estimate of their distinct union', () => {
    const fs = newMemFs();
    const make = (path: string, from: number, to: number): HyperLogLog => {
      const entries = [];
      for (let i = from; i < to; i++) entries.push(makeEntry(enc.encode(`k${i}`), 1, ValueType.VALUE, new Uint8Array(0)));
      buildTable(fs, path, sortEntries(entries), {});
      return Table.open(fs, path).properties!.keySketch!;
    };
    const a = make('/db/a.ldb', 0, 30_000);
    const b = make('/db/b.ldb', 20_000, 50_000);
    a.merge(b);
    expect(Math.abs(a.count() - 50_000) / 50_000).toBeLessThan(4 * a.standardError);
  });
});
