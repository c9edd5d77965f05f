import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyProbes } from '../../src/filter/key-probes.js';
import { encodeInternalKey, MAX_SEQUENCE, ValueType } from '../../src/format/internal-key.js';
import { MemTableInternalIterator } from '../../src/iterator/memtable-iterator.js';
import { MemTable } from '../../src/memtable/memtable.js';
import { FILL_SLICE } from '../../src/memtable/memtable-filter.js';
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

  it("seekIfMayMatch leaves the list alone when the memtable's Bloom filter rules the key out, else seeks", () => {
    const key = (n: number): Uint8Array => bytes(`key${String(n).padStart(5, '0')}`);
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.nat(999), { maxLength: 200 }),
        fc.array(fc.tuple(fc.nat(999), fc.nat(300)), { minLength: 1, maxLength: 40 }),
        fc.constantFrom(0, 1024, 1 << 16),
        (stored, targets, bloomBits) => {
          const mem = new MemTable({ bloomBits });
          stored.forEach((k, i) => mem.add(i + 1, ValueType.VALUE, key(k), bytes(`v${k}`)));
          const lazy = new MemTableInternalIterator(mem);
          const plain = new MemTableInternalIterator(mem);
          const probes = new KeyProbes();
          let ruledOut = 0;
          for (const [k, seq] of targets) {
            const target = encodeInternalKey(key(k), seq, ValueType.VALUE);
            plain.seek(target);
            if (lazy.seekIfMayMatch(target, probes)) {
              expect(lazy.valid()).toBe(plain.valid());
              if (plain.valid()) expect(Buffer.from(lazy.key()).equals(Buffer.from(plain.key()))).toBe(true);
            } else {
              ruledOut++;
              expect(stored).not.toContain(k); // only absent keys are ruled out
              lazy.seek(target); // it must be sought before use: then it lands where seek does
              expect(lazy.valid()).toBe(plain.valid());
              if (plain.valid()) expect(Buffer.from(lazy.key()).equals(Buffer.from(plain.key()))).toBe(true);
            }
          }
          if (bloomBits === 0) expect(ruledOut).toBe(0);
        },
      ),
    );
    // A filter of 64 Ki bits over a few keys rules out nearly every absent one.
    const mem = new MemTable({ bloomBits: 1 << 16 });
    for (let k = 0; k < 100; k++) mem.add(k + 1, ValueType.VALUE, key(k), bytes('v'));
    const it = new MemTableInternalIterator(mem);
    const probes = new KeyProbes();
    let ruledOut = 0;
    for (let k = 100; k < 1100; k++) if (!it.seekIfMayMatch(encodeInternalKey(key(k), 1, ValueType.VALUE), probes)) ruledOut++;
    expect(ruledOut).toBeGreaterThan(990);
  });

  it("a deferred Bloom filter is filled by seeks as by gets, and then rules keys out", () => {
    const key = (i: number): Uint8Array => bytes(`key-${String(i).padStart(5, '0')}`);
    const source = new MemTable();
    for (let i = 0; i < 4000; i += 2) source.add(i + 1, ValueType.VALUE, key(i), key(i));
    const mem = new MemTable({ bloomBits: 65536, state: { list: source.exportState(), maxSequence: 4000 }, deferBloom: true });
    const it = new MemTableInternalIterator(mem);
    const probes = new KeyProbes();
    // Deferred: every seek searches the list (a sixteenth of 2,000 entries is 125 searches).
    for (let i = 0; i < 125; i++) expect(it.seekIfMayMatch(encodeInternalKey(key(2 * i + 1), 9999, ValueType.VALUE), probes)).toBe(true);
    expect(mem.bloomDeferred).toBe(true);
    // The 126th begins the fill, a slice per seek (FILL_SLICE keys, then 4·FILL_SLICE links), every
    // seek still answering from the list meanwhile.
    let seeks = 0;
    while (mem.bloomDeferred) {
      const mayMatch = it.seekIfMayMatch(encodeInternalKey(key(1), 9999, ValueType.VALUE), probes);
      if (mem.bloomDeferred) expect(mayMatch).toBe(true); // the last seek's slice ends the fill: the filter answers it
      seeks++;
    }
    expect(seeks).toBe(Math.ceil(2000 / FILL_SLICE) + Math.ceil(2000 / (4 * FILL_SLICE)));
    let ruledOut = 0;
    for (let i = 1; i < 4000; i += 2) if (!it.seekIfMayMatch(encodeInternalKey(key(i), 9999, ValueType.VALUE), probes)) ruledOut++;
    expect(ruledOut).toBeGreaterThan(1900);
    for (let i = 0; i < 4000; i += 2) expect(it.seekIfMayMatch(encodeInternalKey(key(i), 9999, ValueType.VALUE), probes)).toBe(true);
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
