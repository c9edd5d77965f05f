/**
 * LevelDB's `Hash(data, n, seed)` (util/hash.cc): a Murmur-like 32-bit hash. Persisted through
 * every Bloom filter LevelDB and sievekv write, so it must stay bit-exact.
 */

const M = 0xc6a4a793;
const R = 24;

/** LevelDB's Hash over `data[start, end)`. Unsigned 32-bit result. Allocates nothing. */
export function levelDBHashRange(data: Uint8Array, start: number, end: number, seed: number): number {
  const n = end - start;
  let h = (seed ^ Math.imul(n, M)) >>> 0;
  let i = start;
  const limit = start + (n & ~3);
  for (; i < limit; i += 4) {
    const w = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    h = Math.imul(h + w, M);
    h ^= h >>> 16;
  }
  // LevelDB's tail switch falls through 3 → 2 → 1; the bytes are added as uint8 (LevelDB casts
  // through uint8_t since the 2018 sign-extension fix; the fixtures' high-byte vectors pin it).
  const rest = end - i;
  if (rest > 0) {
    if (rest === 3) h += data[i + 2]! << 16;
    if (rest >= 2) h += data[i + 1]! << 8;
    h += data[i]!;
    h = Math.imul(h, M);
    h ^= h >>> R;
  }
  return h >>> 0;
}

/** LevelDB's Hash of the whole of `data`. */
export function levelDBHash(data: Uint8Array, seed: number): number {
  return levelDBHashRange(data, 0, data.length, seed);
}
