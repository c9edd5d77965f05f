import { describe, expect, it } from 'vitest';
import {
  BLOCKED_BLOOM_BLOCK_BYTES,
  BlockedBloomFilterPolicy,
  blockedBloomFalsePositiveRate,
  blockedBloomProbes,
  buildBlockedBloomFromHashes,
} from '../../src/filter/blocked-bloom.js';
import { keyHash } from '../../src/filter/ribbon-format.js';
import { describePolicyContract } from './policy-contract.js';

describePolicyContract('BlockedBloomFilterPolicy', (bitsPerKey) => new BlockedBloomFilterPolicy(bitsPerKey), {
  // The mean over blocks of (bits set / 512)^k: exact for random absent keys given the filter's
  // bits, as each absent key picks a block and k bit positions at random.
  theoreticalFpr: (_bitsPerKey, _n, filter) => blockedBloomFalsePositiveRate(filter),
  bitsPerKeyRange: [1, 40],
  fractionalBitsPerKey: true,
  // Whole 64-byte blocks for n · bitsPerKey bits, and the 6-byte header.
  maxFilterBytes: (bitsPerKey, n) => 6 + BLOCKED_BLOOM_BLOCK_BYTES * Math.max(1, Math.ceil((n * bitsPerKey) / 512)),
  // A cut filter's length is no longer the 6 + 64·B its header states: detected, answered "may match".
  truncationMayFalseNegative: false,
});

const key = (i: number): Uint8Array => new TextEncoder().encode(`key-${String(i).padStart(8, '0')}`);

describe('BlockedBloomFilterPolicy layout', () => {
  it('stores version 1, k and the block count, then whole 64-byte blocks; the filter of no keys is the header alone and matches nothing', () => {
    const policy = new BlockedBloomFilterPolicy(15);
    const f = policy.createFilter([key(1), key(2), key(3)]);
    expect(f[0]).toBe(1);
    expect(f[1]).toBe(blockedBloomProbes(15));
    expect(blockedBloomProbes(15)).toBe(10);
    expect(Array.from(f.subarray(2, 6))).toEqual([1, 0, 0, 0]);
    expect(f.length).toBe(6 + 64);
    const empty = policy.createFilter([]);
    expect(Array.from(empty)).toEqual([1, 10, 0, 0, 0, 0]);
    expect(policy.keyMayMatch(key(1), empty)).toBe(false);
  });

  it('sets k bits of one block per key: block ⌊h·B/2^32⌋, bits from c by the multiplicative sequence', () => {
    const keys = Array.from({ length: 500 }, (_, i) => key(i));
    const policy = new BlockedBloomFilterPolicy(12);
    const f = policy.createFilter(keys);
    // Rebuild by the rule the format documents, independently of the builder.
    const blocks = Math.ceil((500 * 12) / 512);
    expect(f.length).toBe(6 + 64 * blocks);
    const k = f[1]!;
    const expected = new Uint8Array(f.length);
    expected[0] = 1;
    expected[1] = k;
    expected[2] = blocks;
    const h = new Int32Array(2);
    for (const kk of keys) {
      keyHash(kk, 0, kk.length, h, 0);
      const block = Math.floor(((h[0]! >>> 0) * blocks) / 2 ** 32);
      let x = h[1]! >>> 0;
      for (let i = 0; i < k; i++) {
        const bit = x >>> 23;
        expected[6 + 64 * block + (bit >>> 3)]! |= 1 << (bit & 7);
        x = Number((BigInt(x) * 0x9e3779b9n) % 2n ** 32n);
      }
    }
    expect(f).toEqual(expected);
  });

  it('builds the same bytes from keyHash words as from the keys', () => {
    const keys = Array.from({ length: 3000 }, (_, i) => key(i * 7));
    const hashes = new Int32Array(2 * keys.length);
    keys.forEach((kk, i) => keyHash(kk, 0, kk.length, hashes, 2 * i));
    expect(buildBlockedBloomFromHashes(hashes, keys.length, 15)).toEqual(new BlockedBloomFilterPolicy(15).createFilter(keys));
  });

  it('answers "may match" for a bad version, k out of range, a block count the bytes do not hold, or a cut filter', () => {
    const policy = new BlockedBloomFilterPolicy(15);
    const f = policy.createFilter(Array.from({ length: 100 }, (_, i) => key(i)));
    const absent = Array.from({ length: 200 }, (_, i) => key(100_000 + i));
    const matchesAll = (bytes: Uint8Array): boolean => absent.every((a) => policy.keyMayMatch(a, bytes));
    expect(matchesAll(f)).toBe(false);
    for (const [at, value] of [[0, 2], [1, 0], [1, 25], [2, 2], [5, 4]] as const) {
      const bad = f.slice();
      bad[at] = value;
      expect(matchesAll(bad)).toBe(true);
    }
    expect(matchesAll(f.subarray(0, f.length - 1))).toBe(true);
    expect(matchesAll(f.subarray(0, 6))).toBe(true);
    expect(matchesAll(f.subarray(0, 1))).toBe(true);
  });

  it('rejects a bits/key below 1 or not finite', () => {
    for (const bad of [0, 0.5, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new BlockedBloomFilterPolicy(bad)).toThrow(/bitsPerKey/);
    }
  });
});
