/**
 * DezhouKV's region router (its KEY_PUT_WHERE): which of four regions holds a key.
 *
 *   h = MurmurHash3 x64_128(key, seed 0), first 64-bit word, unsigned
 *   d = (h mod 1.5e10) − 1e10
 *   region 1 if d < 0; 2 if 0 < d < 1e9; 3 if 1e9 < d < 5e9; otherwise 0
 *
 * So region 1 takes about 2/3 of the keys, region 2 about 1/15, region 3 about 4/15, and region 0
 * only the exact boundaries d = 0 and d = 1e9 (about 2 keys in 1.5e10). The split is uneven by the
 * original's design; `JumpRouter` (jump-router.ts) balances instead.
 *
 * Exact arithmetic: h is a 64-bit integer, beyond a double's 53 bits, so `h mod 1.5e10` is taken
 * over 16-bit limbs (every intermediate stays below 2^50), never by rounding h to a double. With
 * a 32-bit hash instead, h < 2^32 < 1e10 and every key would land in region 1.
 */
import { murmur3_x64_128Into } from '../filter/murmur3.js';
import type { RegionRouter } from './region-router.js';

const MODULUS = 1.5e10;
const OFFSET = 1e10;
const REGION2_END = 1e9;
const REGION3_END = 5e9;

/** `(hi · 2^32 + lo) mod m` for unsigned 32-bit halves and m < 2^34, exactly. */
export function mod64(lo: number, hi: number, m: number): number {
  let r = (hi >>> 16) % m;
  r = (r * 65536 + (hi & 0xffff)) % m;
  r = (r * 65536 + (lo >>> 16)) % m;
  return (r * 65536 + (lo & 0xffff)) % m;
}

/** The region of `d` per KEY_PUT_WHERE. */
export function dezhouRegionOfOffset(d: number): number {
  if (d < 0) return 1;
  if (d > 0 && d < REGION2_END) return 2;
  if (d > REGION2_END && d < REGION3_END) return 3;
  return 0;
}

export class DezhouRegionRouter implements RegionRouter {
  /** Persisted in the database: never change for this routing function. */
  readonly name = 'dezhoukv.key_put_where';
  readonly regions: readonly number[] = Object.freeze([0, 1, 2, 3]);
  readonly #hash = new Uint32Array(4);

  regionOf(key: Uint8Array): number {
    const h = this.#hash;
    murmur3_x64_128Into(key, 0, key.length, 0, h);
    return dezhouRegionOfOffset(mod64(h[0]!, h[1]!, MODULUS) - OFFSET);
  }
}
