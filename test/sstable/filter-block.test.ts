import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FilterPolicy, FilterProbe } from '../../src/filter/policy.js';
import { putFixed32 } from '../../src/format/coding.js';
import { FILTER_BASE_LG, FilterBlockBuilder, FilterBlockReader } from '../../src/sstable/filter-block.js';
import { BloomFilterPolicy } from '../../src/filter/bloom.js';

const bytes = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/**
 * Test-only policy: a filter is the exact set of keys (length-prefixed, one byte each), so a
 * filter answers exactly and the tests can tell which keys went into which filter. Counts calls.
 */
class ExactSetPolicy implements FilterPolicy {
  readonly name = 'test.ExactSet';
  calls = 0;
  createFilter(keys: readonly Uint8Array[]): Uint8Array {
    this.calls++;
    const out: number[] = [];
    for (const k of keys) out.push(k.length, ...k);
    return Uint8Array.from(out);
  }
  keyMayMatch(key: Uint8Array, filter: Uint8Array): boolean {
    const p = this.newProbe();
    p.setKey(key);
    return p.mayMatch(filter);
  }
  newProbe(): FilterProbe {
    let key = new Uint8Array(0);
    return {
      setKey(k: Uint8Array) {
        key = k.slice();
      },
      mayMatch(filter: Uint8Array, start = 0, end = filter.length) {
        let p = start;
        while (p < end) {
          const n = filter[p]!;
          if (hex(filter.subarray(p + 1, p + 1 + n)) === hex(key)) return true;
          p += 1 + n;
        }
        return false;
      },
    };
  }
}

function mayMatch(reader: FilterBlockReader, policy: FilterPolicy, offset: number, key: string | Uint8Array): boolean {
  const probe = policy.newProbe();
  probe.setKey(typeof key === 'string' ? bytes(key) : key);
  return reader.keyMayMatch(offset, probe);
}

describe('FilterBlockBuilder / FilterBlockReader (filter_block_test.cc cases)', () => {
  it('an empty builder writes an empty offset array and base lg 11; everything may match', () => {
    const policy = new ExactSetPolicy();
    const block = new FilterBlockBuilder(policy).finish();
    expect([...block]).toEqual([0, 0, 0, 0, 11]);
    const reader = new FilterBlockReader(block);
    expect(mayMatch(reader, policy, 0, 'foo')).toBe(true);
    expect(mayMatch(reader, policy, 100000, 'foo')).toBe(true);
    expect(policy.calls).toBe(0);
  });

  it('single chunk: blocks within 2 KiB share one filter', () => {
    const policy = new ExactSetPolicy();
    const b = new FilterBlockBuilder(policy);
    b.startBlock(100);
    for (const k of ['foo', 'bar', 'box']) b.addKey(bytes(k));
    b.startBlock(200);
    b.addKey(bytes('box'));
    b.startBlock(300);
    b.addKey(bytes('hello'));
    const reader = new FilterBlockReader(b.finish());
    for (const k of ['foo', 'bar', 'box', 'hello']) expect(mayMatch(reader, policy, 100, k)).toBe(true);
    expect(mayMatch(reader, policy, 100, 'missing')).toBe(false);
    expect(mayMatch(reader, policy, 100, 'other')).toBe(false);
    expect(reader.filterCount).toBe(1);
    expect(reader.baseLg).toBe(FILTER_BASE_LG);
  });

  it('multi chunk: one filter per 2 KiB, an empty range writes an empty filter without createFilter', () => {
    const policy = new ExactSetPolicy();
    const b = new FilterBlockBuilder(policy);
    b.startBlock(0);
    b.addKey(bytes('foo'));
    b.startBlock(2000);
    b.addKey(bytes('bar'));
    b.startBlock(3100);
    b.addKey(bytes('box'));
    b.startBlock(9000);
    b.addKey(bytes('box'));
    b.addKey(bytes('hello'));
    const reader = new FilterBlockReader(b.finish());
    expect(policy.calls).toBe(3); // filters 0, 1 and 4; 2 and 3 are empty
    expect(reader.filterCount).toBe(5);
    const m = (off: number, k: string): boolean => mayMatch(reader, policy, off, k);
    expect([m(0, 'foo'), m(2000, 'bar'), m(0, 'box'), m(0, 'hello')]).toEqual([true, true, false, false]);
    expect([m(3100, 'box'), m(3100, 'foo'), m(3100, 'bar'), m(3100, 'hello')]).toEqual([true, false, false, false]);
    expect([m(4100, 'foo'), m(4100, 'bar'), m(4100, 'box'), m(4100, 'hello')]).toEqual([false, false, false, false]);
    expect([m(9000, 'box'), m(9000, 'hello'), m(9000, 'foo'), m(9000, 'bar')]).toEqual([true, true, false, false]);
    // Past the last filter: may match.
    expect(m(5 * 2048, 'nothing')).toBe(true);
    expect(reader.filterRange(2)).toEqual(reader.filterRange(3));
  });

  it('keys given as sub-ranges are copied (the caller may reuse its buffer)', () => {
    const policy = new ExactSetPolicy();
    const b = new FilterBlockBuilder(policy);
    b.startBlock(0);
    const buf = bytes('xxkey1yy');
    b.addKey(buf, 2, 6);
    buf.fill(0);
    const reader = new FilterBlockReader(b.finish());
    expect(mayMatch(reader, policy, 0, 'key1')).toBe(true);
    expect(mayMatch(reader, policy, 0, 'xxkey1yy')).toBe(false);
  });

  it('block offsets going back are INVALID_ARGUMENT', () => {
    const b = new FilterBlockBuilder(new ExactSetPolicy());
    b.startBlock(5000);
    expect(() => b.startBlock(100)).toThrow(/INVALID_ARGUMENT/);
  });

  it('model: any keys per data block are found in their block\'s filter and only there', () => {
    const blocksArb = fc.array(
      fc.tuple(fc.integer({ min: 0, max: 5000 }), fc.array(fc.uint8Array({ maxLength: 4, max: 5 }), { maxLength: 5 })),
      { maxLength: 12 },
    );
    fc.assert(
      fc.property(blocksArb, fc.array(fc.uint8Array({ maxLength: 4, max: 5 }), { maxLength: 5 }), (blocks, probes) => {
        const policy = new ExactSetPolicy();
        const b = new FilterBlockBuilder(policy);
        let offset = 0;
        const byFilter = new Map<number, Set<string>>();
        const placed: [number, Uint8Array[]][] = [];
        for (const [gap, keys] of blocks) {
          b.startBlock(offset);
          const set = byFilter.get(Math.floor(offset / 2048)) ?? new Set<string>();
          for (const k of keys) {
            b.addKey(k);
            set.add(hex(k));
          }
          byFilter.set(Math.floor(offset / 2048), set);
          placed.push([offset, keys]);
          offset += gap;
        }
        const reader = new FilterBlockReader(b.finish());
        for (const [off, keys] of placed) {
          for (const k of keys) expect(mayMatch(reader, policy, off, k)).toBe(true);
          for (const p of probes) {
            const expected = byFilter.get(Math.floor(off / 2048))!.has(hex(p)) || Math.floor(off / 2048) >= reader.filterCount;
            expect(mayMatch(reader, policy, off, p)).toBe(expected);
          }
        }
      }),
    );
  });
});

describe('FilterBlockReader on malformed blocks: always "may match", never throws', () => {
  const policy = new ExactSetPolicy();

  it('too short, or an array offset past the end', () => {
    for (const bad of [new Uint8Array(0), new Uint8Array(4), Uint8Array.from([9, 0, 0, 0, 11])]) {
      const reader = new FilterBlockReader(bad);
      expect(reader.filterCount).toBe(0);
      expect(mayMatch(reader, policy, 0, 'k')).toBe(true);
    }
  });

  it('filter offsets out of order or past the filters', () => {
    // Two filters; the first's range [3, 1) is reversed; the second's end (the array offset) is fine.
    const block = new Uint8Array([1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 11]);
    putFixed32(block, 4, 3);
    putFixed32(block, 8, 1);
    putFixed32(block, 12, 4);
    const reader = new FilterBlockReader(block);
    expect(reader.filterCount).toBe(2);
    expect(mayMatch(reader, policy, 0, 'zzz')).toBe(true);
    expect(reader.filterRange(0)).toBeUndefined();
  });

  it('random bytes: a boolean for every offset, no exception', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), fc.maxSafeNat(), (block, off) => {
        const reader = new FilterBlockReader(block);
        expect(typeof mayMatch(reader, policy, off, 'k')).toBe('boolean');
        expect(typeof mayMatch(reader, policy, 0, 'k')).toBe('boolean');
      }),
    );
  });
});

describe('FilterBlockBuilder with the built-in Bloom policy (keys hashed as they are added)', () => {
  it('writes the very bytes the policy\'s createFilter gives through the generic path', () => {
    // The same policy behind a plain FilterPolicy object takes the generic path (copied keys,
    // one createFilter call per filter): the block must be byte for byte the same.
    const blocksArb = fc.array(
      fc.tuple(fc.nat(5000), fc.array(fc.uint8Array({ maxLength: 24 }), { maxLength: 40 })),
      { maxLength: 12 },
    );
    fc.assert(
      fc.property(blocksArb, fc.integer({ min: 1, max: 20 }), (blocks, bitsPerKey) => {
        const bloom = new BloomFilterPolicy(bitsPerKey);
        const generic: FilterPolicy = {
          name: bloom.name,
          createFilter: (keys) => bloom.createFilter(keys),
          keyMayMatch: (key, filter) => bloom.keyMayMatch(key, filter),
          newProbe: () => bloom.newProbe(),
        };
        const fast = new FilterBlockBuilder(bloom);
        const slow = new FilterBlockBuilder(generic);
        let offset = 0;
        for (const [gap, keys] of blocks) {
          fast.startBlock(offset);
          slow.startBlock(offset);
          for (const key of keys) {
            // Keys given as a sub-range of a larger buffer, as the table builder gives them.
            const padded = new Uint8Array(key.length + 2);
            padded.set(key, 1);
            fast.addKey(padded, 1, 1 + key.length);
            slow.addKey(padded, 1, 1 + key.length);
          }
          offset += gap;
        }
        expect(hex(fast.finish())).toBe(hex(slow.finish()));
      }),
      { numRuns: 300 },
    );
  });
});
