/**
 * HyperLogLog (Flajolet, Fusy, Gandouet, Meunier 2007): a distinct-key counter in 2^p bytes with
 * relative standard error 1.04 / √(2^p) (0.81% at the default p = 14, 16 KiB).
 *
 * Each key is hashed with MurmurHash3 x64_128 (seed 0; strings as UTF-8) and only h1, a 64-bit
 * word, is used: its top p bits choose a register, and the register keeps the largest ρ seen,
 * ρ = 1 + the number of leading zeros of the remaining 64 − p bits (at most 65 − p).
 *
 * `count()` is the standard estimator E = α_m · m² / Σ 2^−M[j], with the paper's small-range
 * correction: when E ≤ 2.5·m and some register is still 0, linear counting m · ln(m / V) (V = the
 * number of zero registers). The paper's large-range correction exists only because its hash has
 * 32 bits (collisions as n nears 2^32); with a 64-bit hash collisions are negligible below about
 * 2^50 keys, so there is none.
 *
 * Serialized form (little-endian; persisted: never change version 1):
 *
 * | offset | size | field                                              |
 * |--------|------|----------------------------------------------------|
 * | 0      | 4    | magic "SKHL" (0x53 0x4b 0x48 0x4c)                 |
 * | 4      | 1    | version = 1                                        |
 * | 5      | 1    | precision p, 4..18                                 |
 * | 6      | 2    | reserved, 0                                        |
 * | 8      | 2^p  | registers, one byte each, each 0..65 − p           |
 * | end−4  | 4    | crc32c (unmasked) of every preceding byte          |
 *
 * Not thread-safe: one sketch belongs to one thread (share it by serializing).
 */
import { crc32c } from '../format/crc32c.js';
import { corruption, invalidArgument } from '../errors.js';
import { badKey, encodeUtf8ToScratch, utf8Scratch } from './key-bytes.js';
import { murmur3_x64_128Into } from './murmur3.js';

export const MIN_PRECISION = 4;
export const MAX_PRECISION = 18;
/** @defaultValue 14: 16 KiB of registers, 0.81% standard error. */
export const DEFAULT_PRECISION = 14;

/** Persisted: never change. */
const MAGIC = [0x53, 0x4b, 0x48, 0x4c] as const; // "SKHL"
/** Persisted: never renumber; a new layout gets a new version. */
const FORMAT_VERSION = 1 as const;
const HEADER_SIZE = 8;
const CHECKSUM_SIZE = 4;
/** Persisted through every register: the hash every sketch uses, so sketches can merge. */
const HASH_SEED = 0;

// Hash scratch: written and consumed within one call (single-threaded), never retained.
const hash = new Uint32Array(4);

export class HyperLogLog {
  readonly #p: number;
  readonly #registers: Uint8Array;

  /**
   * An empty sketch with 2^precision registers.
   * @throws SieveError INVALID_ARGUMENT unless precision is an integer in 4..18.
   */
  constructor(precision: number = DEFAULT_PRECISION) {
    if (!Number.isInteger(precision) || precision < MIN_PRECISION || precision > MAX_PRECISION) {
      throw invalidArgument(`precision must be an integer in ${MIN_PRECISION}..${MAX_PRECISION}, got ${precision}`);
    }
    this.#p = precision;
    this.#registers = new Uint8Array(1 << precision);
  }

  /** p: the sketch has 2^p registers. */
  get precision(): number {
    return this.#p;
  }

  /** The relative standard error of `count()`: 1.04 / √(2^p). */
  get standardError(): number {
    return 1.04 / Math.sqrt(this.#registers.length);
  }

  /** Adds one key (strings as UTF-8). Adding a key again changes nothing. */
  add(key: Uint8Array | string): void {
    if (key instanceof Uint8Array) {
      murmur3_x64_128Into(key, 0, key.length, HASH_SEED, hash);
    } else if (typeof key === 'string') {
      const n = encodeUtf8ToScratch(key);
      murmur3_x64_128Into(utf8Scratch(), 0, n, HASH_SEED, hash);
    } else {
      throw badKey(key);
    }
    this.addHash(hash[0]!, hash[1]!);
  }

  /**
   * Adds the key `data[start, end)` without a subarray view: the allocation-free path for
   * callers holding keys inside larger buffers (e.g. a table builder). Same result as `add`.
   */
  addRange(data: Uint8Array, start: number, end: number): void {
    murmur3_x64_128Into(data, start, end, HASH_SEED, hash);
    this.addHash(hash[0]!, hash[1]!);
  }

  /**
   * Adds a key already hashed: `hashLo`, `hashHi` are the low and high 32 bits of h1 of
   * MurmurHash3 x64_128 (seed 0) of the key, i.e. `out[0]`, `out[1]` of `murmur3_x64_128Into`
   * (as unsigned or int32 numbers: only their bits count). Any other hash makes the sketch
   * unmergeable with those built by `add`; sketches built with one other hash merge with each
   * other (the database's table key sketches do so).
   */
  addHash(hashLo: number, hashHi: number): void {
    const p = this.#p;
    const index = hashHi >>> (32 - p);
    // The 64 − p bits after the index: first the low 32 − p bits of hashHi, then hashLo.
    const rest = hashHi << p;
    const rho = rest !== 0 ? Math.clz32(rest) + 1 : 32 - p + Math.clz32(hashLo) + 1;
    const registers = this.#registers;
    if (rho > registers[index]!) registers[index] = rho;
  }

  /** The estimated number of distinct keys added (rounded to an integer). */
  count(): number {
    const registers = this.#registers;
    const m = registers.length;
    let sum = 0;
    let zeros = 0;
    for (let j = 0; j < m; j++) {
      const r = registers[j]!;
      if (r === 0) zeros++;
      sum += POW2_NEG[r]!;
    }
    const estimate = (alpha(m) * m * m) / sum;
    if (estimate <= 2.5 * m && zeros > 0) return Math.round(m * Math.log(m / zeros));
    return Math.round(estimate);
  }

  /**
   * Folds `other` into this sketch (register-wise maximum): afterwards this counts the union.
   * @throws SieveError INVALID_ARGUMENT if the precisions differ.
   */
  merge(other: HyperLogLog): void {
    if (!(other instanceof HyperLogLog) || other.#p !== this.#p) {
      throw invalidArgument('HyperLogLog sketches of different precision cannot be merged');
    }
    const mine = this.#registers;
    const theirs = other.#registers;
    for (let j = 0; j < mine.length; j++) if (theirs[j]! > mine[j]!) mine[j] = theirs[j]!;
  }

  /** An independent copy. */
  copy(): HyperLogLog {
    const result = new HyperLogLog(this.#p);
    result.#registers.set(this.#registers);
    return result;
  }

  /** The sketch in the versioned, checksummed form of the file header. Owned by the caller. */
  serialize(): Uint8Array {
    const m = this.#registers.length;
    const out = new Uint8Array(HEADER_SIZE + m + CHECKSUM_SIZE);
    out.set(MAGIC, 0);
    out[4] = FORMAT_VERSION;
    out[5] = this.#p;
    // bytes 6, 7: reserved, zero
    out.set(this.#registers, HEADER_SIZE);
    new DataView(out.buffer).setUint32(HEADER_SIZE + m, crc32c(out.subarray(0, HEADER_SIZE + m)), true);
    return out;
  }

  /**
   * Reads a sketch written by `serialize`. The bytes are copied, not retained.
   * @throws SieveError CORRUPTION if the bytes are not a whole, intact version-1 sketch.
   */
  static deserialize(bytes: Uint8Array): HyperLogLog {
    if (!(bytes instanceof Uint8Array)) throw new TypeError('bytes must be a Uint8Array');
    if (bytes.length < HEADER_SIZE + CHECKSUM_SIZE) {
      throw corruption(`HyperLogLog truncated: ${bytes.length} bytes, header needs ${HEADER_SIZE + CHECKSUM_SIZE}`);
    }
    for (let i = 0; i < MAGIC.length; i++) {
      if (bytes[i] !== MAGIC[i]) throw corruption('not a serialized HyperLogLog (bad magic)', { offset: i });
    }
    if (bytes[4] !== FORMAT_VERSION) throw corruption(`unknown HyperLogLog format version ${bytes[4]}`, { offset: 4 });
    const p = bytes[5]!;
    if (p < MIN_PRECISION || p > MAX_PRECISION) throw corruption(`HyperLogLog precision ${p} out of range`, { offset: 5 });
    if (bytes[6] !== 0 || bytes[7] !== 0) throw corruption('HyperLogLog reserved bytes are not zero', { offset: 6 });
    const m = 1 << p;
    const total = HEADER_SIZE + m + CHECKSUM_SIZE;
    if (bytes.length !== total) {
      throw corruption(`HyperLogLog length ${bytes.length} does not match its header (${total})`, {
        offset: Math.min(bytes.length, total),
      });
    }
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (view.getUint32(HEADER_SIZE + m, true) !== crc32c(bytes.subarray(0, HEADER_SIZE + m))) {
      throw corruption('HyperLogLog checksum mismatch', { offset: HEADER_SIZE + m });
    }
    const maxRho = 65 - p;
    for (let j = 0; j < m; j++) {
      if (bytes[HEADER_SIZE + j]! > maxRho) {
        throw corruption(`HyperLogLog register ${j} holds ${bytes[HEADER_SIZE + j]}, above ${maxRho}`, {
          offset: HEADER_SIZE + j,
        });
      }
    }
    const sketch = new HyperLogLog(p);
    sketch.#registers.set(bytes.subarray(HEADER_SIZE, HEADER_SIZE + m));
    return sketch;
  }
}

/** 2^−r for every register value r (0..61 occur; the table covers a whole byte). */
const POW2_NEG = Float64Array.from({ length: 256 }, (_, r) => Math.pow(2, -r));

/** The bias constant α_m of the paper (Figure 3). */
function alpha(m: number): number {
  if (m === 16) return 0.673;
  if (m === 32) return 0.697;
  if (m === 64) return 0.709;
  return 0.7213 / (1 + 1.079 / m);
}
