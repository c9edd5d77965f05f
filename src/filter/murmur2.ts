/**
 * MurmurHash2, 32-bit, seeded (Austin Appleby's reference `MurmurHash2` in SMHasher's
 * `MurmurHash2.cpp`, read little-endian as its endian-neutral twin `MurmurHashNeutral2` does).
 *
 * Cassandra's Java port (`org.apache.cassandra.utils.MurmurHash.hash32`, the one its Bloom
 * filters used) agrees with the reference on every 4-byte block but not on the 1–3 byte tail:
 *
 * - byte order: the reference XORs tail bytes t0, t1, t2 in as `t2 << 16 ^ t1 << 8 ^ t0`; the
 *   port reads them from the end (`data[len-3] << 16 ^ data[len-2] << 8 ^ data[len-1]`), i.e.
 *   `t0 << 16 ^ t1 << 8 ^ t2` for a 3-byte tail and `t0 << 8 ^ t1` for a 2-byte tail;
 * - sign: Java bytes are signed and the port does not mask them, so a tail byte ≥ 0x80 is
 *   sign-extended (`0xffffff80 | b`) before the shift and XOR.
 *
 * So the two agree when `len % 4 === 0`, or when `len % 4 === 1` and the last byte is < 0x80,
 * and differ otherwise. `murmur2` is the reference (the function the name means everywhere
 * else); `murmur2Cassandra` reproduces the port for reading data Cassandra's hash chose.
 *
 * Both return an unsigned 32-bit number (Java's `int` result is `murmur2Cassandra(...) | 0`).
 * Seeds are taken modulo 2^32. Both allocate nothing.
 */

const M = 0x5bd1e995;

/** Reference MurmurHash2 over `data[start, end)`. Unsigned 32-bit result. */
export function murmur2Range(data: Uint8Array, start: number, end: number, seed: number): number {
  const n = end - start;
  let h = (seed ^ n) | 0;
  const limit = start + (n & ~3);
  let i = start;
  for (; i < limit; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  const rest = end - i;
  if (rest > 0) {
    if (rest > 2) h ^= data[i + 2]! << 16;
    if (rest > 1) h ^= data[i + 1]! << 8;
    h ^= data[i]!;
    h = Math.imul(h, M);
  }
  return finish(h);
}

/** Reference MurmurHash2 of the whole of `data`. Unsigned 32-bit result. */
export function murmur2(data: Uint8Array, seed = 0): number {
  return murmur2Range(data, 0, data.length, seed);
}

/**
 * Cassandra's `MurmurHash.hash32(data, 0, data.length, seed)`: MurmurHash2 with the tail read
 * from the end and sign-extended (see the file header). Unsigned 32-bit result.
 */
export function murmur2Cassandra(data: Uint8Array, seed = 0): number {
  const n = data.length;
  let h = (seed ^ n) | 0;
  const limit = n & ~3;
  for (let i = 0; i < limit; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  const rest = n - limit;
  if (rest > 0) {
    // (b << 24) >> 24 is Java's byte → int sign extension.
    if (rest >= 3) h ^= ((data[n - 3]! << 24) >> 24) << 16;
    if (rest >= 2) h ^= ((data[n - 2]! << 24) >> 24) << 8;
    h ^= (data[n - 1]! << 24) >> 24;
    h = Math.imul(h, M);
  }
  return finish(h);
}

function finish(h: number): number {
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h >>> 0;
}
