/**
 * A balanced router: jump consistent hash (Lamping & Veach, 2014) over n regions, keyed by the
 * first 64-bit word of MurmurHash3 x64_128. Every region gets 1/n of the keys (DezhouKV's split
 * gives one region 2/3), and growing from n to n+1 regions moves only the 1/(n+1) of keys that the
 * new region takes — though sievekv does not re-shard a database: the router's name, with n, is
 * persisted and a reopen with another router is refused.
 *
 * The algorithm's 64-bit linear congruential step (× 2862933555777941757 + 1 mod 2^64) is done in
 * 32-bit halves, so routing allocates nothing and needs no BigInt.
 */
import { invalidArgument } from '../errors.js';
import { murmur3_x64_128Into } from '../filter/murmur3.js';
import type { RegionRouter } from './region-router.js';

/** 2862933555777941757 = 0x27BB2EE6_87B0B0FD, the LCG multiplier of the jump hash paper. */
const C_LO = 0x87b0b0fd;
const C_HI = 0x27bb2ee6;
const TWO_POW_31 = 2147483648;

/** The high 32 bits of the 64-bit product of two unsigned 32-bit integers. */
function mulHigh32(a: number, b: number): number {
  const a0 = a & 0xffff;
  const a1 = a >>> 16;
  const b0 = b & 0xffff;
  const b1 = b >>> 16;
  const p00 = a0 * b0;
  const p01 = a0 * b1;
  const p10 = a1 * b0;
  const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  return (a1 * b1 + Math.floor(p01 / 65536) + Math.floor(p10 / 65536) + Math.floor(mid / 65536)) >>> 0;
}

/** Jump consistent hash of the 64-bit key (lo, hi) into [0, buckets). */
export function jumpHash(lo: number, hi: number, buckets: number): number {
  let b = -1;
  let j = 0;
  let kLo = lo >>> 0;
  let kHi = hi >>> 0;
  while (j < buckets) {
    b = j;
    // key = key * C + 1 (mod 2^64)
    const nextHi = (mulHigh32(kLo, C_LO) + Math.imul(kHi, C_LO) + Math.imul(kLo, C_HI)) >>> 0;
    const nextLo = Math.imul(kLo, C_LO) >>> 0;
    kLo = (nextLo + 1) >>> 0;
    kHi = kLo === 0 ? (nextHi + 1) >>> 0 : nextHi;
    // j = (b + 1) * (2^31 / ((key >>> 33) + 1))
    j = Math.floor((b + 1) * (TWO_POW_31 / ((kHi >>> 1) + 1)));
  }
  return b;
}

export class JumpRouter implements RegionRouter {
  readonly name: string;
  readonly regions: readonly number[];
  readonly #hash = new Uint32Array(4);

  constructor(readonly regionCount: number) {
    if (!Number.isInteger(regionCount) || regionCount < 1 || regionCount > 1024) {
      throw invalidArgument(`JumpRouter: region count must be an integer in [1, 1024], got ${String(regionCount)}`);
    }
    this.name = `sievekv.jump(${regionCount})`;
    this.regions = Object.freeze(Array.from({ length: regionCount }, (_, i) => i));
  }

  regionOf(key: Uint8Array): number {
    const h = this.#hash;
    murmur3_x64_128Into(key, 0, key.length, 0, h);
    return jumpHash(h[0]!, h[1]!, this.regionCount);
  }
}
