/**
 * The byte helpers the builders keep their last key with (src/format/bytes.ts): the common
 * prefix of two ranges, and rewriting an array's bytes after a prefix it already holds, into a
 * larger array when it is too short.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { commonPrefixLength, copyBytes, replaceAfterPrefix } from '../../src/format/bytes.js';

/** Short keys from a small alphabet, so prefixes are common. */
const keyArb = fc.array(fc.constantFrom(0, 1, 2), { maxLength: 90 }).map((k) => Uint8Array.from(k));

describe('commonPrefixLength', () => {
  it('is the length of the longest common prefix of a[0, aLen) and b[bStart, bEnd)', () => {
    fc.assert(
      fc.property(keyArb, keyArb, fc.nat(5), fc.nat(5), (a, b, trimA, offset) => {
        const aLen = Math.max(0, a.length - trimA);
        const padded = new Uint8Array(offset + b.length + 3).fill(9);
        padded.set(b, offset);
        let expected = 0;
        while (expected < aLen && expected < b.length && a[expected] === b[expected]) expected++;
        expect(commonPrefixLength(a, aLen, padded, offset, offset + b.length)).toBe(expected);
      }),
    );
  });
});

describe('replaceAfterPrefix', () => {
  it('leaves the new key in the array it returns, growing it only when it is too short', () => {
    fc.assert(
      fc.property(fc.array(keyArb, { minLength: 1, maxLength: 30 }), fc.constantFrom(1, 8, 64), (keys, capacity) => {
        let last: Uint8Array = new Uint8Array(capacity);
        let lastLen = 0;
        for (const key of keys) {
          const src = new Uint8Array(key.length + 4).fill(7);
          src.set(key, 2);
          const shared = commonPrefixLength(last, lastLen, src, 2, 2 + key.length);
          const before = last;
          last = replaceAfterPrefix(last, shared, src, 2, 2 + key.length);
          lastLen = key.length;
          expect(last.subarray(0, lastLen)).toEqual(key);
          if (key.length <= before.length) expect(last).toBe(before);
          else expect(last.length).toBeGreaterThanOrEqual(Math.max(key.length, 2 * before.length));
        }
      }),
    );
  });

  it('copies only from the prefix on: bytes before it are the array’s own', () => {
    const dst = Uint8Array.from([1, 2, 3, 4]);
    const out = replaceAfterPrefix(dst, 2, Uint8Array.from([9, 9, 5, 6, 7]), 0, 5);
    expect(Array.from(out.subarray(0, 5))).toEqual([1, 2, 5, 6, 7]); // grown: the prefix carried over
    const same = Uint8Array.from([1, 2, 3, 4]);
    copyBytes(Uint8Array.from([8]), 0, 1, same, 3);
    expect(replaceAfterPrefix(same, 3, Uint8Array.from([0, 0, 0, 5]), 0, 4)).toBe(same);
    expect(Array.from(same)).toEqual([1, 2, 3, 5]);
  });
});
