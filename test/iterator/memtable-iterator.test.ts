import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeInternalKey, MAX_SEQUENCE, ValueType } from '../../src/format/internal-key.js';
import { MemTableInternalIterator } from '../../src/iterator/memtable-iterator.js';
import { MemTable } from '../../src/memtable/memtable.js';
import { iteratorContract } from './iterator-contract.js';
import { memTableOf } from './sources.js';

const bytes = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));

iteratorContract('MemTableInternalIterator', (entries, random) => new MemTableInternalIterator(memTableOf(entries, random)));

describe('MemTableInternalIterator', () => {
  it('orders equal (key, seq) by type descending: a deletion-typed target passes a value entry', () => {
    const mem = new MemTable();
    mem.add(5, ValueType.VALUE, bytes('k'), bytes('v5'));
    mem.add(4, ValueType.DELETION, bytes('k'), new Uint8Array(0));
    mem.add(6, ValueType.VALUE, bytes('m'), bytes('m6'));
    const it = new MemTableInternalIterator(mem);
    it.seek(encodeInternalKey(bytes('k'), 5, ValueType.VALUE));
    expect(Buffer.from(it.value()).toString()).toBe('v5');
    it.seek(encodeInternalKey(bytes('k'), 5, ValueType.DELETION)); // (k,5,1) < (k,5,0)
    expect(Buffer.from(it.key()).equals(encodeInternalKey(bytes('k'), 4, ValueType.DELETION))).toBe(true);
    it.seek(encodeInternalKey(bytes('k'), 4, ValueType.DELETION));
    expect(Buffer.from(it.key()).equals(encodeInternalKey(bytes('k'), 4, ValueType.DELETION))).toBe(true);
    it.seek(encodeInternalKey(bytes('k'), 4, ValueType.VALUE)); // (k,4,1) < (k,4,0): lands on it
    expect(Buffer.from(it.key()).equals(encodeInternalKey(bytes('k'), 4, ValueType.DELETION))).toBe(true);
    it.close();
    expect(it.valid()).toBe(false);
  });

  it('shows sequences up to 2^53 - 1 exactly in its keys', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_SEQUENCE }), fc.boolean(), (seq, del) => {
        const mem = new MemTable();
        const type = del ? ValueType.DELETION : ValueType.VALUE;
        mem.add(seq, type, bytes('key'), del ? new Uint8Array(0) : bytes('v'));
        const it = new MemTableInternalIterator(mem.iterator());
        it.seekToFirst();
        expect(Buffer.from(it.key()).equals(encodeInternalKey(bytes('key'), seq, type))).toBe(true);
      }),
    );
  });

  it('grows its key buffer for long keys', () => {
    const mem = new MemTable();
    const long = new Uint8Array(1000).fill(0x7a); // sorts after "a"
    mem.add(1, ValueType.VALUE, bytes('a'), bytes('1'));
    mem.add(2, ValueType.VALUE, long, bytes('2'));
    const it = new MemTableInternalIterator(mem);
    it.seekToLast();
    expect(Buffer.from(it.key()).equals(encodeInternalKey(long, 2, ValueType.VALUE))).toBe(true);
    it.prev();
    expect(Buffer.from(it.key()).equals(encodeInternalKey(bytes('a'), 1, ValueType.VALUE))).toBe(true);
  });
});
