/**
 * MurmurHash3 (Austin Appleby, SMHasher `MurmurHash3.cpp`): the x86 32-bit and the x64 128-bit
 * variants, bit-exact with the reference on a little-endian machine.
 *
 * Results reach disk and routing decisions (the standalone BloomFilter's serialized bits, the
 * shard router's region choice), so these functions must never change their output.
 *
 * The x64 variant does its 64-bit arithmetic on pairs of int32 halves (`Math.imul` and explicit
 * carries), never BigInt: `murmur3_x64_128Into` allocates nothing, keeps no state between calls
 * and is the hot path (the standalone Bloom filter, the shard router, HyperLogLog).
 *
 * Seeds are 32-bit unsigned (taken modulo 2^32). As in the reference, the x64 variant starts with
 * h1 = h2 = the seed zero-extended to 64 bits.
 */

// x86_32 constants.
const C1_32 = 0xcc9e2d51;
const C2_32 = 0x1b873593;

// x64_128 constants as (hi, lo) 32-bit halves, kept as int32 so V8 holds them unboxed.
const C1_HI = 0x87c37b91 | 0;
const C1_LO = 0x114253d5 | 0;
const C2_HI = 0x4cf5ad43 | 0;
const C2_LO = 0x2745937f | 0;
const FMIX_C1_HI = 0xff51afd7 | 0;
const FMIX_C1_LO = 0xed558ccd | 0;
const FMIX_C2_HI = 0xc4ceb9fe | 0;
const FMIX_C2_LO = 0x1a85ec53 | 0;

/** MurmurHash3_x86_32 over `data[start, end)`. Unsigned 32-bit result. Allocates nothing. */
export function murmur3_x86_32Range(data: Uint8Array, start: number, end: number, seed: number): number {
  let h = seed | 0;
  const n = end - start;
  const limit = start + (n & ~3);
  let i = start;
  for (; i < limit; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, C1_32);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, C2_32);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  const rest = end - i;
  if (rest > 0) {
    let k = data[i]!;
    if (rest > 1) k |= data[i + 1]! << 8;
    if (rest > 2) k |= data[i + 2]! << 16;
    k = Math.imul(k, C1_32);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, C2_32);
    h ^= k;
  }
  h ^= n;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** MurmurHash3_x86_32 of the whole of `data`. Unsigned 32-bit result. */
export function murmur3_x86_32(data: Uint8Array, seed = 0): number {
  return murmur3_x86_32Range(data, 0, data.length, seed);
}

/**
 * The high 32 bits of (aHi:aLo) · (bHi:bLo) mod 2^64, as an int32; the low 32 bits are simply
 * `Math.imul(aLo, bLo)`. Returning one number (rather than a pair through shared state) keeps
 * every value in a register once V8 inlines it. aLo · bLo's upper half is built from 16-bit limbs:
 * each partial product is < 2^32 and every sum < 2^35, so all of it is exact in doubles.
 */
function mulHi(aLo: number, aHi: number, bLo: number, bHi: number): number {
  const a0 = aLo & 0xffff;
  const a1 = aLo >>> 16;
  const b0 = bLo & 0xffff;
  const b1 = bLo >>> 16;
  const p00 = a0 * b0;
  const p01 = a0 * b1;
  const p10 = a1 * b0;
  const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  return (a1 * b1 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16) + Math.imul(aLo, bHi) + Math.imul(aHi, bLo)) | 0;
}

/**
 * MurmurHash3_x64_128 over `data[start, end)`. Writes `[h1lo, h1hi, h2lo, h2hi]` (unsigned) into
 * `out[0..4)`: h1 and h2 as in the reference, whose 16-byte output is h1 then h2, little-endian.
 * Allocates nothing; `out` must hold at least 4 elements.
 *
 * Every 64-bit value is a pair of int32 locals (xxHi, xxLo). Idioms below: a 64-bit add is
 * `lo = (aLo + bLo) | 0` with a carry when the unsigned sum wrapped (`lo >>> 0 < aLo >>> 0`);
 * rotl(x, r) for r < 32 is `hi = hi << r | lo >>> (32 − r)`, `lo = lo << r | hi >>> (32 − r)`;
 * rotl(x, 33) is a half swap then rotl 1; `x >>> 33` is `hi >>> 1` in the low half.
 */
export function murmur3_x64_128Into(
  data: Uint8Array,
  start: number,
  end: number,
  seed: number,
  out: Uint32Array,
): void {
  let h1Lo = seed | 0;
  let h1Hi = 0;
  let h2Lo = seed | 0;
  let h2Hi = 0;
  let kLo = 0;
  let kHi = 0;
  let lo = 0;
  let hi = 0;
  const n = end - start;
  const limit = start + (n & ~15);
  let i = start;
  for (; i < limit; i += 16) {
    // k1 = bytes [i, i+8) little-endian; k1 *= c1; k1 = rotl(k1, 31); k1 *= c2; h1 ^= k1
    kLo = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    kHi = data[i + 4]! | (data[i + 5]! << 8) | (data[i + 6]! << 16) | (data[i + 7]! << 24);
    hi = mulHi(kLo, kHi, C1_LO, C1_HI);
    lo = Math.imul(kLo, C1_LO);
    kLo = (lo << 31) | (hi >>> 1);
    kHi = (hi << 31) | (lo >>> 1);
    h1Hi ^= mulHi(kLo, kHi, C2_LO, C2_HI);
    h1Lo ^= Math.imul(kLo, C2_LO);
    // h1 = rotl(h1, 27); h1 += h2; h1 = h1 * 5 + 0x52dce729
    lo = (h1Lo << 27) | (h1Hi >>> 5);
    hi = (h1Hi << 27) | (h1Lo >>> 5);
    h1Lo = (lo + h2Lo) | 0;
    h1Hi = (hi + h2Hi + (h1Lo >>> 0 < lo >>> 0 ? 1 : 0)) | 0;
    hi = mulHi(h1Lo, h1Hi, 5, 0);
    lo = Math.imul(h1Lo, 5);
    h1Lo = (lo + 0x52dce729) | 0;
    h1Hi = (hi + (h1Lo >>> 0 < lo >>> 0 ? 1 : 0)) | 0;

    // k2 = bytes [i+8, i+16); k2 *= c2; k2 = rotl(k2, 33); k2 *= c1; h2 ^= k2
    kLo = data[i + 8]! | (data[i + 9]! << 8) | (data[i + 10]! << 16) | (data[i + 11]! << 24);
    kHi = data[i + 12]! | (data[i + 13]! << 8) | (data[i + 14]! << 16) | (data[i + 15]! << 24);
    hi = mulHi(kLo, kHi, C2_LO, C2_HI);
    lo = Math.imul(kLo, C2_LO);
    kLo = (hi << 1) | (lo >>> 31);
    kHi = (lo << 1) | (hi >>> 31);
    h2Hi ^= mulHi(kLo, kHi, C1_LO, C1_HI);
    h2Lo ^= Math.imul(kLo, C1_LO);
    // h2 = rotl(h2, 31); h2 += h1; h2 = h2 * 5 + 0x38495ab5
    lo = (h2Lo << 31) | (h2Hi >>> 1);
    hi = (h2Hi << 31) | (h2Lo >>> 1);
    h2Lo = (lo + h1Lo) | 0;
    h2Hi = (hi + h1Hi + (h2Lo >>> 0 < lo >>> 0 ? 1 : 0)) | 0;
    hi = mulHi(h2Lo, h2Hi, 5, 0);
    lo = Math.imul(h2Lo, 5);
    h2Lo = (lo + 0x38495ab5) | 0;
    h2Hi = (hi + (h2Lo >>> 0 < lo >>> 0 ? 1 : 0)) | 0;
  }

  const rest = end - i;
  if (rest > 8) {
    // Tail bytes 8..14 form k2 (byte 8 lowest); k2 *= c2; k2 = rotl(k2, 33); k2 *= c1; h2 ^= k2
    kLo = 0;
    kHi = 0;
    for (let j = rest - 1; j >= 12; j--) kHi = (kHi << 8) | data[i + j]!;
    for (let j = rest > 12 ? 11 : rest - 1; j >= 8; j--) kLo = (kLo << 8) | data[i + j]!;
    hi = mulHi(kLo, kHi, C2_LO, C2_HI);
    lo = Math.imul(kLo, C2_LO);
    kLo = (hi << 1) | (lo >>> 31);
    kHi = (lo << 1) | (hi >>> 31);
    h2Hi ^= mulHi(kLo, kHi, C1_LO, C1_HI);
    h2Lo ^= Math.imul(kLo, C1_LO);
  }
  if (rest > 0) {
    // Tail bytes 0..7 form k1 (byte 0 lowest); k1 *= c1; k1 = rotl(k1, 31); k1 *= c2; h1 ^= k1
    kLo = 0;
    kHi = 0;
    for (let j = (rest > 8 ? 8 : rest) - 1; j >= 4; j--) kHi = (kHi << 8) | data[i + j]!;
    for (let j = (rest > 4 ? 4 : rest) - 1; j >= 0; j--) kLo = (kLo << 8) | data[i + j]!;
    hi = mulHi(kLo, kHi, C1_LO, C1_HI);
    lo = Math.imul(kLo, C1_LO);
    kLo = (lo << 31) | (hi >>> 1);
    kHi = (hi << 31) | (lo >>> 1);
    h1Hi ^= mulHi(kLo, kHi, C2_LO, C2_HI);
    h1Lo ^= Math.imul(kLo, C2_LO);
  }

  // h1 ^= len; h2 ^= len (a Uint8Array range is shorter than 2^32 bytes); h1 += h2; h2 += h1
  h1Lo ^= n;
  h2Lo ^= n;
  lo = h1Lo;
  h1Lo = (h1Lo + h2Lo) | 0;
  h1Hi = (h1Hi + h2Hi + (h1Lo >>> 0 < lo >>> 0 ? 1 : 0)) | 0;
  lo = h2Lo;
  h2Lo = (h2Lo + h1Lo) | 0;
  h2Hi = (h2Hi + h1Hi + (h2Lo >>> 0 < lo >>> 0 ? 1 : 0)) | 0;

  // fmix64(h1): k ^= k >>> 33; k *= fc1; k ^= k >>> 33; k *= fc2; k ^= k >>> 33
  h1Lo ^= h1Hi >>> 1;
  hi = mulHi(h1Lo, h1Hi, FMIX_C1_LO, FMIX_C1_HI);
  lo = Math.imul(h1Lo, FMIX_C1_LO) ^ (hi >>> 1);
  h1Hi = mulHi(lo, hi, FMIX_C2_LO, FMIX_C2_HI);
  h1Lo = Math.imul(lo, FMIX_C2_LO) ^ (h1Hi >>> 1);
  // fmix64(h2)
  h2Lo ^= h2Hi >>> 1;
  hi = mulHi(h2Lo, h2Hi, FMIX_C1_LO, FMIX_C1_HI);
  lo = Math.imul(h2Lo, FMIX_C1_LO) ^ (hi >>> 1);
  h2Hi = mulHi(lo, hi, FMIX_C2_LO, FMIX_C2_HI);
  h2Lo = Math.imul(lo, FMIX_C2_LO) ^ (h2Hi >>> 1);

  // h1 += h2; h2 += h1
  lo = h1Lo;
  h1Lo = (h1Lo + h2Lo) | 0;
  h1Hi = (h1Hi + h2Hi + (h1Lo >>> 0 < lo >>> 0 ? 1 : 0)) | 0;
  lo = h2Lo;
  h2Lo = (h2Lo + h1Lo) | 0;
  h2Hi = (h2Hi + h1Hi + (h2Lo >>> 0 < lo >>> 0 ? 1 : 0)) | 0;
  // Uint32Array stores take the int32 bit patterns as unsigned.
  out[0] = h1Lo;
  out[1] = h1Hi;
  out[2] = h2Lo;
  out[3] = h2Hi;
}

const scratch128 = new Uint32Array(4);

/**
 * MurmurHash3_x64_128 of the whole of `data`, as unsigned 64-bit `[h1, h2]`. Convenience for
 * callers off the hot path (it allocates two BigInts); hot paths use `murmur3_x64_128Into`.
 */
export function murmur3_x64_128(data: Uint8Array, seed = 0): [bigint, bigint] {
  murmur3_x64_128Into(data, 0, data.length, seed, scratch128);
  const h1 = (BigInt(scratch128[1]!) << 32n) | BigInt(scratch128[0]!);
  const h2 = (BigInt(scratch128[3]!) << 32n) | BigInt(scratch128[2]!);
  return [h1, h2];
}
