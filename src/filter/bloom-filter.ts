/**
 * BloomFilter: a standalone, mutable Bloom filter for applications (Guava-like), e.g. a
 * cache-penetration guard that answers "certainly absent" before a slower store is asked.
 * Not a `FilterPolicy` (those build immutable per-table filters); this one grows by `add`.
 *
 * Sizing follows Guava's `BloomFilter.create`: m = optimalNumOfBits(n, p) (n = 0 taken as 1),
 * k = optimalNumOfHashFunctions(n, m), then m is rounded up to a multiple of 64 (at least 64).
 *
 * Hashing: MurmurHash3 x64_128 of the key (strings as UTF-8) with the filter's seed gives h1, h2;
 * probe i uses the 64-bit combination c_i = h1 + i·h2 (mod 2^64), as Guava's MURMUR128_MITZ_64.
 * Where Guava takes `(c_i & Long.MAX_VALUE) % m`, we map the top 32 bits of c_i to a bit index by
 * Lemire's multiply-shift, ⌊(c_i >>> 32) · m / 2^32⌋: as uniform (to within m / 2^32), no 64-bit
 * division, no BigInt. That bounds m to MAX_BITS = 2^32 bits (512 MiB of filter, room for about
 * 450 million keys at 1%); `create` rejects larger filters. Bit i is bit (i & 7) of byte i >>> 3.
 * The bit layout is therefore not Guava's; only our own serialized form is read back.
 *
 * Serialized form (all integers little-endian; persisted: never change version 1):
 *
 * | offset | size  | field                                                       |
 * |--------|-------|-------------------------------------------------------------|
 * | 0      | 4     | magic "SKBF" (0x53 0x4b 0x42 0x46)                          |
 * | 4      | 1     | version = 1                                                 |
 * | 5      | 1     | k, number of probes, 1..255                                 |
 * | 6      | 2     | reserved, 0                                                 |
 * | 8      | 4     | seed (uint32)                                               |
 * | 12     | 4     | m / 64, number of 64-bit words, 1..2^26                     |
 * | 16     | m / 8 | the bit array                                               |
 * | end−4  | 4     | crc32c (unmasked) of every preceding byte                   |
 *
 * `deserialize` checks magic, version, fields, the exact length and the checksum before it
 * allocates, and reports any mismatch as SieveError CORRUPTION with the offset at fault.
 *
 * Not thread-safe: one filter belongs to one thread (share it by serializing).
 */
import { crc32c } from '../format/crc32c.js';
import { corruption, invalidArgument } from '../errors.js';
import { badKey, encodeUtf8ToScratch, utf8Scratch } from './key-bytes.js';
import { murmur3_x64_128Into } from './murmur3.js';
import { optimalNumOfBits, optimalNumOfHashFunctions } from './sizing.js';

/** Largest supported bit array: the multiply-shift index works on 32-bit hash words. */
export const MAX_BITS = 2 ** 32;
/** Largest k the header can hold. */
export const MAX_HASH_COUNT = 255;

/** Persisted: never change. */
const MAGIC = [0x53, 0x4b, 0x42, 0x46] as const; // "SKBF"
/** Persisted: never renumber; a new layout gets a new version. */
const FORMAT_VERSION = 1 as const;
const HEADER_SIZE = 16;
const CHECKSUM_SIZE = 4;

export interface BloomFilterOptions {
  /** Expected number of distinct keys, an integer ≥ 0 (0 is sized as 1, like Guava). */
  readonly expectedInsertions: number;
  /** Target false-positive rate at `expectedInsertions` keys, 0 < fpp < 1. */
  readonly fpp: number;
  /**
   * MurmurHash3 seed (uint32). Filters combine only with filters of the same seed.
   * @defaultValue 0
   */
  readonly seed?: number;
}

// Hash scratch: written and consumed within one call (single-threaded), never retained.
const hash = new Uint32Array(4);

/**
 * Maps a uniform 32-bit `x` to ⌊x · m / 2^32⌋ in [0, m), exactly, for any m ≤ 2^32: x · m may
 * reach 2^64, so it is split at 16 bits of m (each partial product < 2^48 is exact in doubles).
 * `mHi` = ⌊m / 2^16⌋, `mLo` = m mod 2^16.
 */
export function multiplyShift(x: number, mHi: number, mLo: number): number {
  const a = x * mHi; // x · m = a · 2^16 + b
  const b = x * mLo;
  const aq = Math.floor(a / 65536);
  return aq + Math.floor(((a - aq * 65536) * 65536 + b) / 4294967296);
}

export class BloomFilter {
  readonly #bits: Uint8Array;
  readonly #m: number;
  readonly #k: number;
  readonly #seed: number;
  readonly #mHi: number;
  readonly #mLo: number;
  /** Number of set bits, kept exact by every mutation. */
  #bitCount: number;

  private constructor(bits: Uint8Array, k: number, seed: number, bitCount: number) {
    this.#bits = bits;
    this.#m = bits.length * 8;
    this.#k = k;
    this.#seed = seed;
    this.#mHi = Math.floor(this.#m / 65536);
    this.#mLo = this.#m % 65536;
    this.#bitCount = bitCount;
  }

  /**
   * A filter for `expectedInsertions` keys at false-positive rate `fpp` (Guava's sizing).
   * @throws SieveError INVALID_ARGUMENT on a bad option, or if the filter would exceed
   *   {@link MAX_BITS} bits or {@link MAX_HASH_COUNT} probes.
   */
  static create(options: BloomFilterOptions): BloomFilter {
    if (typeof options !== 'object' || options === null) throw invalidArgument('options must be an object');
    const { expectedInsertions, fpp, seed = 0 } = options;
    if (!Number.isSafeInteger(expectedInsertions) || expectedInsertions < 0) {
      throw invalidArgument(`expectedInsertions must be an integer >= 0, got ${expectedInsertions}`);
    }
    if (typeof fpp !== 'number' || !(fpp > 0 && fpp < 1)) {
      throw invalidArgument(`fpp must be a number in (0, 1), got ${fpp}`);
    }
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
      throw invalidArgument(`seed must be a uint32, got ${seed}`);
    }
    const n = Math.max(1, expectedInsertions);
    const bits = optimalNumOfBits(n, fpp);
    const k = optimalNumOfHashFunctions(n, bits);
    const m = Math.max(64, Math.ceil(bits / 64) * 64);
    if (m > MAX_BITS) {
      throw invalidArgument(`a filter for ${expectedInsertions} keys at fpp ${fpp} needs ${m} bits; the maximum is 2^32`);
    }
    if (k > MAX_HASH_COUNT) {
      throw invalidArgument(`fpp ${fpp} needs ${k} hash functions; the maximum is ${MAX_HASH_COUNT}`);
    }
    return new BloomFilter(new Uint8Array(m / 8), k, seed, 0);
  }

  /** m: the number of bits (a multiple of 64). */
  get bitSize(): number {
    return this.#m;
  }

  /** k: the number of probes per key. */
  get hashCount(): number {
    return this.#k;
  }

  /** The MurmurHash3 seed. */
  get seed(): number {
    return this.#seed;
  }

  /**
   * Adds `key`. Returns true if any bit changed (like Guava's `put`): a false return means the
   * key — or keys colliding with it on every probe — was already present.
   */
  add(key: Uint8Array | string): boolean {
    this.#hashKey(key);
    const bits = this.#bits;
    const k = this.#k;
    const mHi = this.#mHi;
    const mLo = this.#mLo;
    const h2Lo = hash[2]!;
    const h2Hi = hash[3]!;
    let lo = hash[0]!;
    let hi = hash[1]!;
    let changed = 0;
    for (let i = 0; i < k; i++) {
      const index = multiplyShift(hi, mHi, mLo);
      const byte = index >>> 3;
      const mask = 1 << (index & 7);
      if ((bits[byte]! & mask) === 0) {
        bits[byte] = bits[byte]! | mask;
        changed++;
      }
      // c += h2 over 64 bits; lo and hi stay unsigned.
      lo += h2Lo;
      hi = (hi + h2Hi + (lo > 0xffffffff ? 1 : 0)) >>> 0;
      lo = lo >>> 0;
    }
    this.#bitCount += changed;
    return changed > 0;
  }

  /** False if `key` was certainly never added; true if it may have been. */
  mightContain(key: Uint8Array | string): boolean {
    this.#hashKey(key);
    const bits = this.#bits;
    const k = this.#k;
    const mHi = this.#mHi;
    const mLo = this.#mLo;
    const h2Lo = hash[2]!;
    const h2Hi = hash[3]!;
    let lo = hash[0]!;
    let hi = hash[1]!;
    for (let i = 0; i < k; i++) {
      const index = multiplyShift(hi, mHi, mLo);
      if ((bits[index >>> 3]! & (1 << (index & 7))) === 0) return false;
      lo += h2Lo;
      hi = (hi + h2Hi + (lo > 0xffffffff ? 1 : 0)) >>> 0;
      lo = lo >>> 0;
    }
    return true;
  }

  /** Guava's estimate of the current false-positive rate: (set bits / m)^k. */
  expectedFpp(): number {
    return Math.pow(this.#bitCount / this.#m, this.#k);
  }

  /**
   * Guava's estimate of the number of distinct keys added: −m/k · ln(1 − set bits / m), rounded
   * half up. Infinity once every bit is set (the estimate has no upper bound there).
   */
  approximateElementCount(): number {
    const fraction = this.#bitCount / this.#m;
    return Math.round((-Math.log1p(-fraction) * this.#m) / this.#k);
  }

  /** True if `other` has the same m, k and seed, so `putAll`/`union` can combine them. */
  isCompatible(other: BloomFilter): boolean {
    return (
      other instanceof BloomFilter && other.#m === this.#m && other.#k === this.#k && other.#seed === this.#seed
    );
  }

  /**
   * Adds every key of `other` to this filter (bitwise OR), like Guava's `putAll`.
   * @throws SieveError INVALID_ARGUMENT if `other` is not compatible.
   */
  putAll(other: BloomFilter): void {
    this.#checkCompatible(other);
    const bits = this.#bits;
    const theirs = other.#bits;
    for (let i = 0; i < bits.length; i++) bits[i] = bits[i]! | theirs[i]!;
    this.#bitCount = popCount(bits);
  }

  /**
   * A new filter holding the keys of both (this one is unchanged).
   * @throws SieveError INVALID_ARGUMENT if `other` is not compatible.
   */
  union(other: BloomFilter): BloomFilter {
    this.#checkCompatible(other);
    const result = this.copy();
    result.putAll(other);
    return result;
  }

  /** An independent copy. */
  copy(): BloomFilter {
    return new BloomFilter(this.#bits.slice(), this.#k, this.#seed, this.#bitCount);
  }

  /** The filter in the versioned, checksummed form of the file header. Owned by the caller. */
  serialize(): Uint8Array {
    const out = new Uint8Array(HEADER_SIZE + this.#bits.length + CHECKSUM_SIZE);
    const view = new DataView(out.buffer);
    out.set(MAGIC, 0);
    out[4] = FORMAT_VERSION;
    out[5] = this.#k;
    view.setUint16(6, 0, true);
    view.setUint32(8, this.#seed, true);
    view.setUint32(12, this.#m / 64, true);
    out.set(this.#bits, HEADER_SIZE);
    const end = HEADER_SIZE + this.#bits.length;
    view.setUint32(end, crc32c(out.subarray(0, end)), true);
    return out;
  }

  /**
   * Reads a filter written by `serialize`. The bytes are copied, not retained.
   * @throws SieveError CORRUPTION if the bytes are not a whole, intact version-1 filter.
   */
  static deserialize(bytes: Uint8Array): BloomFilter {
    if (!(bytes instanceof Uint8Array)) throw new TypeError('bytes must be a Uint8Array');
    if (bytes.length < HEADER_SIZE + CHECKSUM_SIZE) {
      throw corruption(`bloom filter truncated: ${bytes.length} bytes, header needs ${HEADER_SIZE + CHECKSUM_SIZE}`);
    }
    for (let i = 0; i < MAGIC.length; i++) {
      if (bytes[i] !== MAGIC[i]) throw corruption('not a serialized BloomFilter (bad magic)', { offset: i });
    }
    if (bytes[4] !== FORMAT_VERSION) {
      throw corruption(`unknown BloomFilter format version ${bytes[4]}`, { offset: 4 });
    }
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const k = bytes[5]!;
    if (k < 1) throw corruption('bloom filter hash count is 0', { offset: 5 });
    if (view.getUint16(6, true) !== 0) throw corruption('bloom filter reserved bytes are not zero', { offset: 6 });
    const seed = view.getUint32(8, true);
    const words = view.getUint32(12, true);
    if (words < 1 || words > MAX_BITS / 64) {
      throw corruption(`bloom filter size ${words} words is out of range`, { offset: 12 });
    }
    const byteLength = words * 8;
    const total = HEADER_SIZE + byteLength + CHECKSUM_SIZE;
    if (bytes.length !== total) {
      throw corruption(`bloom filter length ${bytes.length} does not match its header (${total})`, {
        offset: Math.min(bytes.length, total),
      });
    }
    const end = HEADER_SIZE + byteLength;
    const stored = view.getUint32(end, true);
    const actual = crc32c(bytes.subarray(0, end));
    if (stored !== actual) throw corruption('bloom filter checksum mismatch', { offset: end });
    const bits = bytes.slice(HEADER_SIZE, end);
    return new BloomFilter(bits, k, seed, popCount(bits));
  }

  #hashKey(key: Uint8Array | string): void {
    if (key instanceof Uint8Array) {
      murmur3_x64_128Into(key, 0, key.length, this.#seed, hash);
    } else if (typeof key === 'string') {
      const n = encodeUtf8ToScratch(key);
      murmur3_x64_128Into(utf8Scratch(), 0, n, this.#seed, hash);
    } else {
      throw badKey(key);
    }
  }

  #checkCompatible(other: BloomFilter): void {
    if (!this.isCompatible(other)) {
      throw invalidArgument('bloom filters differ in bit size, hash count or seed (or other is not a BloomFilter)');
    }
  }
}

/** Set bits in `bytes`, whose length is a multiple of 8 and which owns its buffer from offset 0. */
function popCount(bytes: Uint8Array): number {
  const words = new Int32Array(bytes.buffer, bytes.byteOffset, bytes.length >>> 2);
  let count = 0;
  for (let i = 0; i < words.length; i++) {
    let v = words[i]!;
    v = v - ((v >>> 1) & 0x55555555);
    v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
    count += (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24);
  }
  return count;
}
