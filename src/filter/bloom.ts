/**
 * LevelDB's built-in Bloom filter policy (`leveldb.BuiltinBloomFilter2`, util/bloom.cc),
 * bit-exact: filters sievekv writes are read by LevelDB and vice versa.
 *
 * Filter layout (persisted: never change):
 *
 *   [ bit array: ⌈bits / 8⌉ bytes, bit i in byte i >> 3 at (1 << (i & 7)) ][ k: 1 byte ]
 *
 * bits = max(64, n · bitsPerKey) rounded up to a multiple of 8. For each key, h = LevelDB's
 * Hash(key, seed 0xbc9f1d34) and delta = h rotated right by 17 bits; the k probes set/test bits
 * h mod bits, (h + delta) mod bits, (h + 2·delta) mod bits, … in 32-bit arithmetic (double
 * hashing, Kirsch–Mitzenmacher 2006).
 *
 * Reading follows LevelDB exactly, k taken from the filter (so filters of any k read back):
 * - fewer than 2 bytes → "no match" (LevelDB's `len < 2` rule: an empty filter is the filter of
 *   no keys; the filter block never stores a real Bloom filter shorter than 9 bytes);
 * - k > 30 → "match" (reserved by LevelDB for new encodings);
 * - k = 0 → "match" (no probe can fail).
 * A truncated filter is not detected (its last byte is then read as k and the bit count
 * changes), so it may give false negatives; the filter block's offsets keep filters intact.
 *
 * Fractional bits/key: LevelDB takes an int. We also accept fractional values: the bit count is
 * n · bitsPerKey rounded to the nearest integer, then up to whole bytes, and k = floor(0.69 ·
 * bitsPerKey) as in LevelDB; for integer bitsPerKey this is exactly LevelDB's arithmetic.
 */
import { invalidArgument } from '../errors.js';
import { levelDBHashRange } from './leveldb-hash.js';
import type { FilterPolicy, FilterProbe } from './policy.js';
import { bitsPerKeyForFalsePositiveRate, bloomHashCount, MAX_BLOOM_HASH_COUNT } from './sizing.js';

/** Persisted in every table's metaindex as `filter.leveldb.BuiltinBloomFilter2`: never change. */
export const BLOOM_FILTER_POLICY_NAME = 'leveldb.BuiltinBloomFilter2' as const;

/** LevelDB's BloomHash seed. Persisted (through every filter's bit positions): never change. */
export const BLOOM_HASH_SEED = 0xbc9f1d34 as const;

/** LevelDB's minimum filter size in bits, so that tiny key sets do not get a uselessly high rate. */
const MIN_FILTER_BITS = 64;

const EMPTY_KEY = new Uint8Array(0);

function bloomHash(key: Uint8Array): number {
  return levelDBHashRange(key, 0, key.length, BLOOM_HASH_SEED);
}

/**
 * `x mod m` for a uint32 `x` and 0 < m < 2^31, in integer arithmetic when m < 2^15: a uint32 above
 * 2^31 is no small integer to V8, and `%` on it is a floating-point remainder (fmod), which cost
 * most of a filter's build.
 */
function uint32Mod(x: number, m: number): number {
  return m < 32768 ? (((x >>> 16) % m) * 65536 + (x & 0xffff)) % m : x % m;
}

/**
 * LevelDB's probes are h_j = (h + j·delta) mod 2^32, each taken mod `bits`. Walked without a
 * remainder per probe: r_{j+1} = r_j + (delta mod bits), less bits when it passes bits, less
 * (2^32 mod bits) when h_j + delta wraps past 2^32 — the same bit positions, bit for bit.
 */
function wrapMod(bits: number): number {
  const r = uint32Mod(0xffffffff, bits) + 1;
  return r === bits ? 0 : r;
}

/** The next probe's bit, r_{j+1}, from r_j (see wrapMod); `wrapped`: h_j + delta passed 2^32. */
function nextProbe(r: number, step: number, bits: number, wrapped: boolean, wrap: number): number {
  r += step;
  if (r >= bits) r -= bits;
  if (wrapped) {
    r -= wrap;
    if (r < 0) r += bits;
  }
  return r;
}

/**
 * `h mod bits` for a uint32 `h` and 0 < bits < 2^31, in floating point without a branch: the
 * quotient's rounding error (at most h/bits · 2^-53, under half an ulp of any integer below
 * 2^32) is smaller than its distance to the next integer (at least 1/bits), so the floor is
 * exact, and so is the product and difference (below 2^53). The filter builder's probes: the
 * incremental walk (nextProbe) mispredicted a branch or two per probe on fresh hashes, 58 ns per
 * key against 18 for this (six probes; a scratch loop of random hashes).
 */
function probeBit(h: number, bits: number): number {
  return h - Math.floor(h / bits) * bits;
}

/**
 * Tests a key, already hashed to `h`, against the filter in `filter[start, end)`. Allocation-free.
 * An out-of-bounds range is misuse; it answers "may match" rather than read outside the buffer.
 */
function bloomMayMatch(h: number, filter: Uint8Array, start: number, end: number): boolean {
  if (!(start >= 0 && end <= filter.length && start <= end)) return true;
  const len = end - start;
  if (len < 2) return false;
  const k = filter[end - 1]!;
  if (k > MAX_BLOOM_HASH_COUNT) return true;
  const bits = (len - 1) * 8;
  let r = uint32Mod(h, bits);
  // Most absent keys miss on the first probe: the rest of the walk's setup waits until then.
  if (k === 0 || (filter[start + (r >>> 3)]! & (1 << (r & 7))) === 0) return k === 0;
  const delta = ((h >>> 17) | (h << 15)) >>> 0;
  const step = uint32Mod(delta, bits);
  const wrap = wrapMod(bits);
  for (let j = 1; j < k; j++) {
    const next = (h + delta) >>> 0;
    r = nextProbe(r, step, bits, next < h, wrap);
    h = next;
    if ((filter[start + (r >>> 3)]! & (1 << (r & 7))) === 0) return false;
  }
  return true;
}

/** A key hashed once for Bloom filters; see {@link FilterProbe}. */
class BloomProbe implements FilterProbe {
  private h = bloomHash(EMPTY_KEY);

  setKey(key: Uint8Array): void {
    this.h = bloomHash(key);
  }

  mayMatch(filter: Uint8Array, start = 0, end = filter.length): boolean {
    return bloomMayMatch(this.h, filter, start, end);
  }
}

/**
 * LevelDB's Bloom filter policy. Immutable and stateless between calls: one instance may serve
 * any number of tables and readers.
 *
 * ```ts
 * new BloomFilterPolicy(10);                          // LevelDB's usual setting: k = 6, ≈ 0.8–0.9%
 * BloomFilterPolicy.forFalsePositiveRate(0.001);      // ≈ 14.4 bits/key, k = 10
 * ```
 */
export class BloomFilterPolicy implements FilterPolicy {
  readonly name = BLOOM_FILTER_POLICY_NAME;
  /** Bits of filter per key (≥ 1; fractional allowed). */
  readonly bitsPerKey: number;
  /** k, the number of probes per key, 1..30; stored as each filter's last byte. */
  readonly hashCount: number;

  /**
   * @param bitsPerKey a finite number ≥ 1 (LevelDB: an int; 10 is usual)
   * @param hashCount probes per key, an integer 1..30; defaults to LevelDB's
   *   `bloomHashCount(bitsPerKey)` = floor(0.69 · bitsPerKey). Any k reads back (it is stored
   *   in the filter), also with LevelDB.
   * @throws SieveError INVALID_ARGUMENT on a value out of range
   */
  constructor(bitsPerKey: number, hashCount?: number) {
    if (typeof bitsPerKey !== 'number' || !Number.isFinite(bitsPerKey) || bitsPerKey < 1) {
      throw invalidArgument(`BloomFilterPolicy: bitsPerKey must be a finite number >= 1, got ${String(bitsPerKey)}`);
    }
    const k = hashCount ?? bloomHashCount(bitsPerKey);
    if (!Number.isInteger(k) || k < 1 || k > MAX_BLOOM_HASH_COUNT) {
      throw invalidArgument(
        `BloomFilterPolicy: hashCount must be an integer in 1..${MAX_BLOOM_HASH_COUNT}, got ${String(hashCount)}`,
      );
    }
    this.bitsPerKey = bitsPerKey;
    this.hashCount = k;
  }

  /**
   * A policy sized for a target false-positive rate `p` (0 < p < 1): bitsPerKey = −ln p / (ln 2)²
   * (Guava's optimalNumOfBits per key, kept fractional) and k = round(bitsPerKey · ln 2) (Guava's
   * optimalNumOfHashFunctions), clamped to 1..30. We use Guava's rounded k rather than LevelDB's
   * floor(0.69 · b): the caller asked for a rate, and the nearer-optimal k meets it more closely
   * (LevelDB rounds down to save probes). Rates above e^(−(ln 2)²) ≈ 0.62 would need < 1 bit/key;
   * they get 1 bit/key and k = 1 (theory ≈ 0.63).
   *
   * @throws SieveError INVALID_ARGUMENT unless 0 < p < 1
   */
  static forFalsePositiveRate(p: number): BloomFilterPolicy {
    const bitsPerKey = Math.max(1, bitsPerKeyForFalsePositiveRate(p));
    // Guava's max(1, round(m / n · ln 2)) with m / n = bitsPerKey.
    const k = Math.max(1, Math.round(bitsPerKey * Math.log(2)));
    return new BloomFilterPolicy(bitsPerKey, Math.min(k, MAX_BLOOM_HASH_COUNT));
  }

  /** Builds LevelDB's filter over `keys` (any count, duplicates allowed). Returns an owned buffer. */
  createFilter(keys: readonly Uint8Array[]): Uint8Array {
    const n = keys.length;
    const hashes = new Uint32Array(n);
    for (let i = 0; i < n; i++) hashes[i] = bloomHash(keys[i]!);
    const filter = new Uint8Array(this.filterLength(n));
    this.writeFilter(hashes, n, filter, 0);
    return filter;
  }

  /** The length in bytes of a filter over `n` keys (the bit array and the k byte). */
  filterLength(n: number): number {
    let bits = Math.round(n * this.bitsPerKey);
    if (bits < MIN_FILTER_BITS) bits = MIN_FILTER_BITS;
    return Math.ceil(bits / 8) + 1;
  }

  /**
   * Writes the filter over the keys whose `bloomHash`es are `hashes[0, n)` at `dst[at]` — the
   * bytes `createFilter` returns for those keys, without a view or an array per key (a table
   * builder hashes each key as it is added). `dst[at, at + filterLength(n))` must be zero.
   * Returns the offset past the filter.
   */
  writeFilter(hashes: Uint32Array, n: number, dst: Uint8Array, at: number): number {
    const bytes = this.filterLength(n) - 1;
    const bits = bytes * 8;
    const k = this.hashCount;
    dst[at + bytes] = k;
    for (let i = 0; i < n; i++) {
      let h = hashes[i]!;
      const delta = ((h >>> 17) | (h << 15)) >>> 0;
      // The probes of bloomMayMatch: h_j = (h + j·delta) mod 2^32, each taken mod bits.
      for (let j = 0; j < k; j++) {
        const r = probeBit(h, bits);
        dst[at + (r >>> 3)] |= 1 << (r & 7);
        h = (h + delta) >>> 0;
      }
    }
    return at + bytes + 1;
  }

  /** LevelDB's KeyMayMatch; see the file header for the rules on short and unusual filters. */
  keyMayMatch(key: Uint8Array, filter: Uint8Array): boolean {
    return bloomMayMatch(bloomHash(key), filter, 0, filter.length);
  }

  newProbe(): FilterProbe {
    return new BloomProbe();
  }
}
