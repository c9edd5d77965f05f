import fc from 'fast-check';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { DezhouRegionRouter, dezhouRegionOfOffset, mod64 } from '../../src/shard/dezhou-router.js';
import { jumpHash, JumpRouter } from '../../src/shard/jump-router.js';

// murmurhash3js-revisited ships no types: describe the one function used here.
const murmurhash3js = createRequire(import.meta.url)('murmurhash3js-revisited') as { x64: { hash128(key: Uint8Array, seed: number): string } };

/** An independent reference: murmurhash3js-revisited's x64_128, first word, then BigInt arithmetic. */
function referenceDezhou(key: Uint8Array): number {
  const hex = murmurhash3js.x64.hash128(key, 0); // h1 ‖ h2, each 16 hex digits
  const h = BigInt(`0x${hex.slice(0, 16)}`);
  const d = Number(h % 15_000_000_000n) - 1e10;
  return dezhouRegionOfOffset(d);
}

/** The jump hash paper's code, in BigInt. */
function referenceJump(key: bigint, buckets: number): number {
  let b = -1n;
  let j = 0n;
  let k = key;
  while (j < BigInt(buckets)) {
    b = j;
    k = (k * 2862933555777941757n + 1n) & 0xffff_ffff_ffff_ffffn;
    j = BigInt(Math.floor(Number(b + 1n) * (2147483648 / Number((k >> 33n) + 1n))));
  }
  return Number(b);
}

const u32 = fc.integer({ min: 0, max: 0xffffffff });

describe('mod64', () => {
  it('equals BigInt arithmetic for any 64-bit value and modulus < 2^34', () => {
    fc.assert(
      fc.property(u32, u32, fc.integer({ min: 1, max: 2 ** 34 - 1 }), (lo, hi, m) => {
        expect(mod64(lo, hi, m)).toBe(Number(((BigInt(hi) << 32n) | BigInt(lo)) % BigInt(m)));
      }),
    );
  });
});

describe('DezhouRegionRouter (KEY_PUT_WHERE)', () => {
  const router = new DezhouRegionRouter();

  it('puts the boundaries where DezhouKV does', () => {
    const cases: [number, number][] = [
      [-1e10, 1], [-1, 1], [0, 0], [1, 2], [1e9 - 1, 2], [1e9, 0], [1e9 + 1, 3], [5e9 - 1, 3], [5e9, 0],
    ];
    for (const [d, region] of cases) expect(dezhouRegionOfOffset(d), `d = ${d}`).toBe(region);
  });

  it('agrees with an independent MurmurHash3 and exact BigInt arithmetic on any key', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (key) => {
        expect(router.regionOf(key)).toBe(referenceDezhou(key));
      }),
      { numRuns: 2000 },
    );
  });

  it('routes these keys as computed by hand from their hashes', () => {
    // key → first 64-bit word of MurmurHash3 x64_128 (seed 0) → h mod 1.5e10 → d → region
    const te = new TextEncoder();
    for (const key of ['', 'a', 'user:1', 'user:2', 'hello world', 'sievekv']) {
      const bytes = te.encode(key);
      const h = BigInt(`0x${murmurhash3js.x64.hash128(bytes, 0).slice(0, 16)}`);
      const d = Number(h % 15_000_000_000n) - 1e10;
      const expected = d < 0 ? 1 : d > 0 && d < 1e9 ? 2 : d > 1e9 && d < 5e9 ? 3 : 0;
      expect(router.regionOf(bytes), `${JSON.stringify(key)}: h=${h}, d=${d}`).toBe(expected);
    }
  });

  it('splits 1,000,000 keys about 2/3, 1/15, 4/15 (within 4 binomial standard deviations)', () => {
    const n = 1_000_000;
    const counts = [0, 0, 0, 0];
    const key = new Uint8Array(8);
    const view = new DataView(key.buffer);
    for (let i = 0; i < n; i++) {
      view.setUint32(0, i);
      view.setUint32(4, Math.imul(i, 0x9e3779b1));
      counts[router.regionOf(key)]!++;
    }
    const shares = [0, 2 / 3, 1 / 15, 4 / 15];
    for (let r = 1; r <= 3; r++) {
      const p = shares[r]!;
      const sigma = Math.sqrt(n * p * (1 - p));
      expect(Math.abs(counts[r]! - n * p), `region ${r}: ${counts[r]}`).toBeLessThan(4 * sigma);
    }
    expect(counts[0]).toBeLessThanOrEqual(2); // the exact boundaries: ~1.3e-4 expected
  });
});

describe('JumpRouter (jump consistent hash)', () => {
  it('equals the algorithm of the paper, in BigInt, for any key and bucket count', () => {
    fc.assert(
      fc.property(u32, u32, fc.integer({ min: 1, max: 5000 }), (lo, hi, n) => {
        expect(jumpHash(lo, hi, n)).toBe(referenceJump((BigInt(hi) << 32n) | BigInt(lo), n));
      }),
      { numRuns: 2000 },
    );
  });

  it('is consistent: going from n to n+1 regions, a key stays or moves to the new region', () => {
    fc.assert(
      fc.property(u32, u32, fc.integer({ min: 1, max: 200 }), (lo, hi, n) => {
        const before = jumpHash(lo, hi, n);
        const after = jumpHash(lo, hi, n + 1);
        expect(after === before || after === n).toBe(true);
      }),
    );
  });

  it('balances keys across regions', () => {
    const router = new JumpRouter(5);
    const counts = new Array(5).fill(0);
    const n = 200_000;
    for (let i = 0; i < n; i++) counts[router.regionOf(new TextEncoder().encode(`key-${i}`))]++;
    const sigma = Math.sqrt(n * 0.2 * 0.8);
    for (const c of counts) expect(Math.abs(c - n / 5)).toBeLessThan(4 * sigma);
    expect(router.name).toBe('sievekv.jump(5)');
    expect(() => new JumpRouter(0)).toThrow(/region count/);
  });
});
