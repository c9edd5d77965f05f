import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FilterPolicy } from '../../src/filter/policy.js';
import { RibbonFilterPolicy } from '../../src/filter/ribbon.js';
import { BlockedBloomFilterPolicy } from '../../src/filter/blocked-bloom.js';
import { keyHash } from '../../src/filter/ribbon-format.js';
import { FullFilterBuilder } from '../../src/sstable/full-filter-block.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** The same policy behind a plain FilterPolicy object: builders take the generic path (keys copied, one createFilter call). */
function behindPlainObject(policy: FilterPolicy): FilterPolicy {
  return {
    name: policy.name,
    createFilter: (keys) => policy.createFilter(keys),
    keyMayMatch: (key, filter) => policy.keyMayMatch(key, filter),
    newProbe: () => policy.newProbe(),
  };
}

/** The built-in policies whose filters FullFilterBuilder makes from each key's hash as it arrives. */
const HASHING_POLICIES: readonly (readonly [string, (bitsPerKey: number) => FilterPolicy])[] = [
  ['Ribbon (keys hashed into rows)', (b) => new RibbonFilterPolicy(b)],
  ['blocked Bloom (keys kept as their keyHash words)', (b) => new BlockedBloomFilterPolicy(b)],
];

describe.each(HASHING_POLICIES)('FullFilterBuilder with the built-in %s policy', (_label, make) => {
  it("writes the very bytes the policy's createFilter gives through the generic path", () => {
    // The same policy behind a plain FilterPolicy object takes the generic path (keys copied,
    // one createFilter call): the filter must be byte for byte the same, and the distinct-key
    // count too. Keys repeat (adjacent repeats are one key) and come as sub-ranges of a buffer.
    const keysArb = fc.array(fc.uint8Array({ maxLength: 20, max: 3 }), { maxLength: 300 });
    fc.assert(
      fc.property(keysArb, fc.integer({ min: 1, max: 24 }), fc.boolean(), (keys, bitsPerKey, sorted) => {
        const ribbon = make(bitsPerKey);
        const generic = behindPlainObject(ribbon);
        const list = sorted ? [...keys].sort(Buffer.compare) : keys;
        const fast = new FullFilterBuilder(ribbon);
        const slow = new FullFilterBuilder(generic);
        for (const key of list) {
          const padded = new Uint8Array(key.length + 3);
          padded.set(key, 2);
          fast.addKey(padded, 2, 2 + key.length);
          slow.addKey(padded, 2, 2 + key.length);
        }
        expect(fast.keyCount).toBe(slow.keyCount);
        const filter = fast.finish();
        expect(hex(filter)).toBe(hex(slow.finish()));
        for (const key of list) expect(ribbon.keyMayMatch(key, filter)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('addDistinctKey, given no key equal to the one before it (with or without its keyHash), builds what addKey builds, on both paths', () => {
    // The table builder knows whether a user key is new and calls addDistinctKey: the bytes and
    // the key count must be those of addKey, for the hashed keys and for the generic (copying) path.
    const keysArb = fc.array(fc.uint8Array({ maxLength: 12, max: 2 }), { maxLength: 200 });
    fc.assert(
      fc.property(keysArb, fc.integer({ min: 1, max: 20 }), (raw, bitsPerKey) => {
        const keys = [...raw].sort(Buffer.compare).filter((k, i, all) => i === 0 || Buffer.compare(k, all[i - 1]!) !== 0);
        const ribbon = make(bitsPerKey);
        for (const policy of [ribbon, behindPlainObject(ribbon)]) {
          const checked = new FullFilterBuilder(policy);
          const distinct = new FullFilterBuilder(policy);
          // As the table builder calls it: with the key's keyHash, which the hashing paths use.
          const hashed = new FullFilterBuilder(policy);
          const hash = new Int32Array(2);
          for (const key of keys) {
            const padded = new Uint8Array(key.length + 2);
            padded.set(key, 1);
            checked.addKey(padded, 1, 1 + key.length);
            distinct.addDistinctKey(padded, 1, 1 + key.length);
            keyHash(padded, 1, 1 + key.length, hash, 0);
            hashed.addDistinctKey(padded, 1, 1 + key.length, hash);
          }
          expect(distinct.keyCount).toBe(keys.length);
          const expected = hex(checked.finish());
          expect(hex(distinct.finish())).toBe(expected);
          expect(hex(hashed.finish())).toBe(expected);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('refuses a mix of addKey and addDistinctKey in one builder', () => {
    const key = new Uint8Array([1, 2]);
    const checked = new FullFilterBuilder(new RibbonFilterPolicy(10));
    checked.addKey(key, 0, 2);
    expect(() => checked.addDistinctKey(key, 0, 1)).toThrow(/addDistinctKey after addKey/);
    const distinct = new FullFilterBuilder(new RibbonFilterPolicy(10));
    distinct.addDistinctKey(key, 0, 2);
    expect(() => distinct.addKey(key, 0, 1)).toThrow(/addKey after addDistinctKey/);
  });

  it('leaves a subclass of the policy to its own createFilter', () => {
    class Counting extends RibbonFilterPolicy {
      calls = 0;
      override createFilter(keys: readonly Uint8Array[]): Uint8Array {
        this.calls++;
        return super.createFilter(keys);
      }
    }
    const policy = new Counting(10);
    const builder = new FullFilterBuilder(policy);
    builder.addKey(new Uint8Array([1, 2, 3]), 0, 3);
    builder.finish();
    expect(policy.calls).toBe(1);
  });
});
