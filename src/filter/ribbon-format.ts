/**
 * The persisted half of the Ribbon filter (`sievekv.Ribbon1`): the byte layout, the key hash and
 * the derivation of each key's equation. Shared by the builder (ribbon-builder.ts) and the reader
 * (ribbon.ts); docs/filters.md draws the layout. Everything here reaches disk through the bits of
 * every filter written: never change a constant or a function's output for format version 1.
 *
 * Layout (varints are LEB128, at most 4 bytes each):
 *
 *   [version: 1 byte = 1][seed: 1 byte][r: 1 byte][B: varint][U: varint][body: B·r + (B − U) bytes]
 *
 * The solution has m = 8·B slots, grouped into B blocks of 8 slots. Block x holds r columns if
 * x < U and r + 1 columns if x ≥ U ("fractional" result bits: the upper blocks sit at the end, so a
 * key's 64-slot window never reaches a block with fewer columns than its own start block). Block x
 * is stored as one byte per column, at body offset x·r + max(0, x − U) + column; bit t of that byte
 * is slot 8x + t. Constraints: r + (U < B ? 1 : 0) ≤ 32, U ≤ B, B < 2^28 (so m < 2^31). B = 0 (then r = 0,
 * U = 0, no body) is the filter of no keys. A filter whose keys all check zero columns (r = 0,
 * U = B) matches everything: the builder's last resort.
 *
 * A key's equation: a start slot s in [0, m − w] (w = min(64, m)), a w-bit coefficient row c
 * (bit 0 forced to 1) over slots s .. s+w−1, and a 32-bit fingerprint. The key is in the filter's
 * set only if, for every column j the key checks (those of block s/8), parity(c AND solution
 * column j over slots s .. s+w−1) equals fingerprint bit j. The key is hashed once (`keyRow`:
 * row, fingerprint and a start hash, all independent of the filter); each filter then places it
 * with its own seed and size (`seededStart`, `startSlot`): one multiply and a fast range per probe.
 */

/** Format version 1: this file's layout, hash and derivation. Persisted: never change. */
export const RIBBON_FORMAT_VERSION = 1 as const;
/** Slots per storage block (one byte per column). Persisted: never change. */
export const RIBBON_SLOTS_PER_BLOCK = 8 as const;
/** Width of a coefficient row in slots (two 32-bit halves). Persisted: never change. */
export const RIBBON_COEFF_BITS = 64 as const;
/** Most result bits a key can check (the fingerprint is 32 bits). Persisted: never change. */
export const RIBBON_MAX_COLUMNS = 32 as const;
/** Blocks are fewer than this, so slot numbers fit in 31 bits. Persisted: never change. */
export const RIBBON_MAX_BLOCKS = 2 ** 28;
/** version, seed, r, and the two varints at their shortest. */
export const RIBBON_MIN_HEADER_BYTES = 5 as const;

// Hash constants (persisted through every filter's bits: never change).
const K_M1 = 0x9e3779b1;
const K_M2 = 0x85ebca77;
const K_H1 = 0x2545f491;
const K_H2 = 0x6a09e667;
const K_C1 = 0x27d4eb2f;
const K_FP = 0x165667b1;
const K_SEED = 0x9e3779b9;
const K_START = 0x2c1b3c6d;
const F_1 = 0x85ebca6b;
const F_2 = 0xc2b2ae35;

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, F_1);
  h ^= h >>> 13;
  h = Math.imul(h, F_2);
  return h ^ (h >>> 16);
}

/**
 * Hashes `data[start, end)` once into the seed-independent part of its equation, written to
 * `out[at .. at+3]`: [h, c0, c1, fp] — h places the key (with a filter's seed, see
 * {@link seededStart}), (c0, c1) is the 64-bit coefficient row before the seed's change to its low
 * half ({@link seededRowLow}) and masking, fp the 32 result bits (bit j for column j). Allocates
 * nothing. The same as {@link keyHash} then {@link rowFromHash}.
 *
 * Distinct keys get distinct equations except with probability about 2^−64 per pair (then that
 * seed fails and the next one is tried); equal keys get equal equations, which banding drops as
 * redundant. fp is a non-linear mix of both halves, so it cannot coincide with a linear function
 * of the row (which the solution could then satisfy for every key).
 */
export function keyRow(data: Uint8Array, start: number, end: number, out: Int32Array, at: number): void {
  keyHash(data, start, end, out, at);
  rowFromHash(out, at);
}

/**
 * The key's 64-bit hash (h, c0), written to `out[at]` and `out[at + 1]`: two 32-bit lanes each
 * absorb every 8-byte block (one `Math.imul` per lane per block, as LevelDB's hash spends one per 4
 * bytes), then a cross-lane finish with MurmurHash3's fmix32 on each lane. The first half of a
 * Ribbon row; table key sketches (sstable/key-sketch.ts) count keys by it too, so a table builder
 * hashes each key once for both. Persisted through every filter and sketch: never change.
 */
export function keyHash(data: Uint8Array, start: number, end: number, out: Int32Array, at: number): void {
  const n = end - start;
  let h1 = K_H1 ^ n;
  let h2 = K_H2;
  let i = start;
  const limit = start + (n & ~7);
  for (; i < limit; i += 8) {
    const a = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    const b = data[i + 4]! | (data[i + 5]! << 8) | (data[i + 6]! << 16) | (data[i + 7]! << 24);
    h1 = Math.imul(h1 ^ a, K_M1) + b;
    h1 = (h1 << 13) | (h1 >>> 19);
    h2 = Math.imul(h2 ^ b, K_M2) + a;
    h2 = (h2 << 17) | (h2 >>> 15);
  }
  const rest = end - i;
  if (rest > 0) {
    // The 1..7 trailing bytes, zero-padded; the length (mixed into h1 above) tells them apart.
    let a = 0;
    let b = 0;
    for (let k = 0; k < rest; k++) {
      if (k < 4) a |= data[i + k]! << (8 * k);
      else b |= data[i + k]! << (8 * (k - 4));
    }
    h1 = Math.imul(h1 ^ a, K_M1) + b;
    h1 = (h1 << 13) | (h1 >>> 19);
    h2 = Math.imul(h2 ^ b, K_M2) + a;
    h2 = (h2 << 17) | (h2 >>> 15);
  }
  h1 = (h1 + h2) | 0;
  h2 = (h2 + h1) | 0;
  h1 = fmix32(h1);
  h2 = fmix32(h2);
  h1 = (h1 + h2) | 0;
  h2 = (h2 + h1) | 0;
  out[at] = h1;
  out[at + 1] = h2;
}

/** Completes a row whose hash {@link keyHash} wrote to `out[at]`, `out[at + 1]`: writes c1 and fp. */
export function rowFromHash(out: Int32Array, at: number): void {
  const h1 = out[at]!;
  const h2 = out[at + 1]!;
  out[at + 2] = fmix32(h1 ^ Math.imul(h2, K_C1));
  out[at + 3] = fmix32(h2 + Math.imul(h1, K_FP));
}

/**
 * The placement hash y of a key with start-hash word h in a filter with seed byte `seed`: y's high
 * bits pick the start slot (see {@link startSlot}) and y is xor-ed into the row's low half (see
 * {@link seededRowLow}). The seed is xor-ed in before a multiply, so a new seed moves keys that sat
 * close together to unrelated places, and changes every row: after a failed construction the
 * next seed bands a fresh random system (even below 64 slots, where every key starts at slot 0).
 */
export function seededStart(h: number, seed: number): number {
  return Math.imul(h ^ Math.imul(seed + 1, K_SEED), K_START);
}

/** Bits 0..31 of the key's row in a filter, from c0 and the placement hash y; bit 0 forced to 1. */
export function seededRowLow(c0: number, y: number): number {
  return (c0 ^ y) | 1;
}

/**
 * Lemire's fast range: maps a 32-bit hash onto 0..numStarts−1 by its high bits. Exact in doubles
 * while hash · numStarts < 2^53 (numStarts < 2^21); beyond that the builder and the reader round
 * identically, and the result stays below numStarts (the rounding error, ≤ 2^11, is below it).
 */
export function startSlot(hash: number, numStarts: number): number {
  return Math.floor((hash >>> 0) * numStarts * 2.3283064365386963e-10); // · 2^−32, exact
}

/** Body offset of block x's first column byte, for r lower columns and upper blocks from U. */
export function blockOffset(x: number, r: number, u: number): number {
  return x * r + (x > u ? x - u : 0);
}

/** Header fields, decoded. */
export interface RibbonHeader {
  seed: number;
  /** Columns of the lower blocks (0 .. U−1); the upper blocks (U .. B−1) have r + 1. */
  r: number;
  /** Number of 8-slot blocks. */
  blocks: number;
  /** First upper block. */
  upperStart: number;
  /** Offset of the body from the start of the filter. */
  headerBytes: number;
}

function varintBytes(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

/** Length of the header for these fields. */
export function headerBytes(blocks: number, upperStart: number): number {
  return 3 + varintBytes(blocks) + varintBytes(upperStart);
}

/** Length of the body for these fields. */
export function bodyBytes(blocks: number, r: number, upperStart: number): number {
  return blocks * r + (blocks - upperStart);
}

/** Writes the header at `dst[0..)`; returns the body offset. */
export function writeHeader(dst: Uint8Array, h: RibbonHeader): number {
  dst[0] = RIBBON_FORMAT_VERSION;
  dst[1] = h.seed;
  dst[2] = h.r;
  let p = 3;
  for (const v0 of [h.blocks, h.upperStart]) {
    let v = v0;
    while (v >= 0x80) {
      dst[p++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    dst[p++] = v;
  }
  return p;
}

/**
 * Reads and validates the header of the filter in `f[start, end)` into `out` as
 * [seed, r, blocks, upperStart, bodyStart (absolute index into f)]. Returns false if the bytes
 * are not a well-formed version-1 Ribbon filter: short, unknown version, a varint that runs off the
 * end or past 5 bytes, fields out of range, or a body whose length is not exactly what the fields
 * say. Never reads outside `f[start, end)`; allocates nothing.
 */
export function readHeader(f: Uint8Array, start: number, end: number, out: Int32Array): boolean {
  if (!(end - start >= RIBBON_MIN_HEADER_BYTES) || f[start] !== RIBBON_FORMAT_VERSION) return false;
  const r = f[start + 2]!;
  let p = start + 3;
  // Two LEB128 varints, each < 2^28 (at most 4 bytes; longer is malformed). One byte is common.
  let blocks = f[p++]!;
  if (blocks >= 0x80) {
    blocks &= 0x7f;
    for (let shift = 7; ; shift += 7) {
      if (p >= end || shift > 21) return false;
      const byte = f[p++]!;
      blocks |= (byte & 0x7f) << shift;
      if (byte < 0x80) break;
    }
  }
  if (p >= end) return false;
  let upper = f[p++]!;
  if (upper >= 0x80) {
    upper &= 0x7f;
    for (let shift = 7; ; shift += 7) {
      if (p >= end || shift > 21) return false;
      const byte = f[p++]!;
      upper |= (byte & 0x7f) << shift;
      if (byte < 0x80) break;
    }
  }
  if (upper > blocks || r + (upper < blocks ? 1 : 0) > RIBBON_MAX_COLUMNS) return false;
  if (end - p !== blocks * r + (blocks - upper)) return false;
  out[0] = f[start + 1]!;
  out[1] = r;
  out[2] = blocks;
  out[3] = upper;
  out[4] = p;
  return true;
}
