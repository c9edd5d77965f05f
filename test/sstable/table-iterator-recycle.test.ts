/**
 * Recycled table iterators (TableIteratorOptions.recycle): closed, one goes back to its table,
 * whose next `newIterator({ recycle: true })` hands it out again set up afresh — positioned
 * nowhere, reading this table's blocks — while iterators asked for without it, or with other
 * options, are always new.
 */
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { ValueType } from '../../src/format/internal-key.js';
import { BlockCache } from '../../src/sstable/block-cache.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { Table } from '../../src/sstable/table.js';
import { buildTable, makeEntry, newMemFs, sortEntries, type Entry } from './table-support.js';

const RECYCLE = { recycle: true } as const;

function entriesOf(prefix: string, n: number): Entry[] {
  const enc = new TextEncoder();
  return sortEntries(Array.from({ length: n }, (_, i) => makeEntry(enc.encode(`${prefix}${String(i).padStart(5, '0')}`), i + 1, ValueType.VALUE, enc.encode(`value ${prefix}${i}`))));
}

/** Two tables of different keys, small blocks (many per table), one block cache. */
function twoTables(): { a: Table; b: Table; aEntries: Entry[]; bEntries: Entry[] } {
  const fs = newMemFs();
  const aEntries = entriesOf('a', 500);
  const bEntries = entriesOf('b', 300);
  buildTable(fs, '/db/000001.ldb', aEntries, { blockSize: 256, compression: CompressionType.LZ4 });
  buildTable(fs, '/db/000002.ldb', bEntries, { blockSize: 256, compression: CompressionType.NONE });
  const cache = new BlockCache(64 * 1024);
  return { a: Table.open(fs, '/db/000001.ldb', { blockCache: cache }), b: Table.open(fs, '/db/000002.ldb', { blockCache: cache }), aEntries, bEntries };
}

function keysFrom(it: ReturnType<Table['newIterator']>, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n && it.valid(); i++, it.next()) out.push(Buffer.from(it.key()).toString('hex'));
  return out;
}

const hexKeys = (entries: readonly Entry[], from: number, n: number): string[] => entries.slice(from, from + n).map((e) => Buffer.from(e.key).toString('hex'));

describe('recycled table iterators', () => {
  it('a closed one is handed out again by its own table, unpositioned, and reads that table', () => {
    const { a, b, aEntries, bEntries } = twoTables();
    const first = a.newIterator(RECYCLE);
    first.seek(aEntries[100]!.key);
    expect(keysFrom(first, 3)).toEqual(hexKeys(aEntries, 100, 3));
    first.close();
    expect(() => first.seek(aEntries[0]!.key)).toThrow(expect.objectContaining({ code: ErrorCode.CLOSED }));

    // Table b has no spare: a new iterator; table a's spare waits for a.
    const other = b.newIterator(RECYCLE);
    expect(other).not.toBe(first);
    other.seek(bEntries[7]!.key);
    expect(keysFrom(other, 2)).toEqual(hexKeys(bEntries, 7, 2));

    const again = a.newIterator(RECYCLE);
    expect(again).toBe(first);
    expect(again.valid()).toBe(false); // nothing of its last position kept
    again.seek(aEntries[499]!.key);
    expect(keysFrom(again, 2)).toEqual(hexKeys(aEntries, 499, 1));
    again.seekToLast();
    expect(keysFrom(again, 1)).toEqual(hexKeys(aEntries, 499, 1));
    again.seekToFirst();
    expect(keysFrom(again, 500)).toEqual(hexKeys(aEntries, 0, 500));
    again.close();
    other.close();

    // b's recycled iterator goes back to b, not a.
    expect(b.newIterator(RECYCLE)).toBe(other);
    expect(a.newIterator(RECYCLE)).toBe(first);
  });

  it('its close still runs the owner\'s onClose once, and a second close does nothing', () => {
    const { a, aEntries } = twoTables();
    const it1 = a.newIterator(RECYCLE);
    let closes = 0;
    it1.onClose = () => closes++;
    it1.seek(aEntries[3]!.key);
    it1.close();
    it1.close();
    expect(closes).toBe(1);
    const it2 = a.newIterator(RECYCLE);
    expect(it2).toBe(it1);
    expect(it2.onClose).toBeUndefined(); // the next owner sets its own
  });

  it('iterators asked for without recycle are always new, and never go back', () => {
    const { a } = twoTables();
    const plain = a.newIterator();
    plain.close();
    const recycled = a.newIterator(RECYCLE);
    expect(recycled).not.toBe(plain);
    recycled.close();
    expect(a.newIterator()).not.toBe(recycled); // the spare waits for a recycle ask
    expect(a.newIterator(RECYCLE)).toBe(recycled);
  });

  it('only with the default fill and readahead options (fillCache: true is the default)', () => {
    const { a } = twoTables();
    const explicit = a.newIterator({ recycle: true, fillCache: true });
    explicit.close();
    expect(a.newIterator({ recycle: true, fillCache: true })).toBe(explicit);
    expect(() => a.newIterator({ recycle: true, fillCache: false })).toThrow(expect.objectContaining({ code: ErrorCode.INVALID_ARGUMENT }));
    expect(() => a.newIterator({ recycle: true, maxReadahead: 64 * 1024 })).toThrow(expect.objectContaining({ code: ErrorCode.INVALID_ARGUMENT }));
  });

  it('around a table\'s close: closing its iterators after it is harmless, and newIterator is CLOSED', () => {
    const { a, b } = twoTables();
    const it1 = a.newIterator(RECYCLE);
    a.close();
    it1.close();
    expect(() => a.newIterator(RECYCLE)).toThrow(expect.objectContaining({ code: ErrorCode.CLOSED }));
    const it2 = b.newIterator(RECYCLE);
    it2.close();
    b.close();
    expect(() => b.newIterator(RECYCLE)).toThrow(expect.objectContaining({ code: ErrorCode.CLOSED }));
  });

  it('one whose buffers grew past a few KiB (long keys) is not kept', () => {
    const fs = newMemFs();
    const enc = new TextEncoder();
    const long = sortEntries(Array.from({ length: 20 }, (_, i) => makeEntry(enc.encode(`${'k'.repeat(6000)}${String(i).padStart(3, '0')}`), i + 1, ValueType.VALUE, enc.encode('v'))));
    buildTable(fs, '/db/000003.ldb', long, { blockSize: 256, compression: CompressionType.NONE });
    const table = Table.open(fs, '/db/000003.ldb', { blockCache: new BlockCache(1 << 20) });
    const it1 = table.newIterator(RECYCLE);
    it1.seekToFirst();
    expect(it1.valid()).toBe(true);
    it1.close();
    expect(table.newIterator(RECYCLE)).not.toBe(it1);
  });
});

