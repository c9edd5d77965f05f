/**
 * `RibbonFilterPolicy` (`sievekv.Ribbon1`): a static filter for table files that needs about 30%
 * less space than LevelDB's Bloom filter for the same false-positive rate, or at the same size
 * (10 bits/key over 10,000 keys) has about 0.14% false positives instead of Bloom's 0.8–0.9%.
 *
 * A Standard Ribbon filter (Dillinger & Walzer, "Ribbon filter: practically smaller than Bloom and
 * Xor", 2021; the structure RocksDB ships as Standard128Ribbon, here with 64-bit rows): the
 * filter is the solution of a banded linear system over GF(2) with one equation per key, stored
 * interleaved so a query reads about 9 bytes per result bit, all within a few cache lines. Why
 * Ribbon and not a binary fuse / xor filter, the format, and how it fares at 30 vs 10,000 keys:
 * docs/filters.md. Layout and equations: ribbon-format.ts. Construction: ribbon-builder.ts.
 *
 * Reading rules: a filter that is not well-formed version-1 bytes (short, truncated, extended,
 * unknown version, inconsistent lengths), an empty range, or a range outside the buffer answers
 * "may match"; the filter of no keys (zero blocks) answers "no match". Reads never leave
 * `filter[start, end)` and allocate nothing.
 */
import { invalidArgument } from '../errors.js';
import type { FilterPolicy, FilterProbe } from './policy.js';
import { buildRibbonFilter } from './ribbon-builder.js';
import {
  RIBBON_COEFF_BITS,
  RIBBON_FORMAT_VERSION,
  RIBBON_MAX_COLUMNS,
  RIBBON_MIN_HEADER_BYTES,
  RIBBON_SLOTS_PER_BLOCK,
  blockOffset,
  keyRow,
  readHeader,
  seededRowLow,
  seededStart,
  startSlot,
} from './ribbon-format.js';

/** Persisted in every table's metaindex as `filter.sievekv.Ribbon1`: never change. */
export const RIBBON_FILTER_POLICY_NAME = 'sievekv.Ribbon1' as const;

/** Bits/key when none is given: ≈ 0.14% false positives over 10,000 keys. */
export const DEFAULT_RIBBON_BITS_PER_KEY = 10;

/** Parity of the low 4 bits of the index, as a 16-bit table. */
const PARITY4 = 0x6996;

/**
 * Tests a key, hashed to `row` by `keyRow`, against the filter in `f[start, end)`. `scratch`
 * (8 entries) is the caller's, fully written before being read. The hot path of every point lookup: no
 * allocation, and no data-dependent branch before the column loop except the rare straddle case.
 */
function ribbonMayMatch(row: Int32Array, f: Uint8Array, start: number, end: number, scratch: Int32Array): boolean {
  if (!(start >= 0 && end <= f.length)) return true;
  // The header, by readHeader's rules (inlined here for speed; the tests hold the two equal).
  if (!(end - start >= RIBBON_MIN_HEADER_BYTES) || f[start] !== RIBBON_FORMAT_VERSION) return true;
  const r = f[start + 2]!;
  let p = start + 3;
  let blocks = f[p++]!;
  if (blocks >= 0x80) {
    blocks &= 0x7f;
    for (let shift = 7; ; shift += 7) {
      if (p >= end || shift > 21) return true;
      const byte = f[p++]!;
      blocks |= (byte & 0x7f) << shift;
      if (byte < 0x80) break;
    }
  }
  if (p >= end) return true;
  let u = f[p++]!;
  if (u >= 0x80) {
    u &= 0x7f;
    for (let shift = 7; ; shift += 7) {
      if (p >= end || shift > 21) return true;
      const byte = f[p++]!;
      u |= (byte & 0x7f) << shift;
      if (byte < 0x80) break;
    }
  }
  if (u > blocks || r + (u < blocks ? 1 : 0) > RIBBON_MAX_COLUMNS) return true;
  if (end - p !== blocks * r + (blocks - u)) return true;
  if (blocks === 0) return false; // the filter of no keys
  const body = p;
  const m = blocks * RIBBON_SLOTS_PER_BLOCK;
  const w = m < RIBBON_COEFF_BITS ? m : RIBBON_COEFF_BITS;
  const y = seededStart(row[0]!, f[start + 1]!);
  const s = startSlot(y, m - w + 1);
  const b = s >>> 3;
  const up = (u - b - 1) >>> 31; // 1 if block b is an upper block (b ≥ u), else 0
  const cols = r + up;
  if (cols === 0) return true;
  let cLo = seededRowLow(row[1]!, y);
  let cHi = row[2]!;
  let fp = row[3]!;
  if (w < 64) {
    cHi &= w <= 32 ? 0 : (1 << (w - 32)) - 1;
    if (w < 32) cLo &= (1 << w) - 1;
  }
  // The row shifted to the bit offset o of s in its block spans 72 bits, one byte per window
  // block b .. b+8: k0..k8. (Shifting by 32 − o in two steps keeps o = 0 free of a branch.)
  const o = s & 7;
  const x0 = cLo << o;
  const x1 = (cHi << o) | ((cLo >>> 1) >>> (31 - o));
  const k0 = x0 & 0xff;
  const k1 = (x0 >>> 8) & 0xff;
  const k2 = (x0 >>> 16) & 0xff;
  const k3 = x0 >>> 24;
  const k4 = x1 & 0xff;
  const k5 = (x1 >>> 8) & 0xff;
  const k6 = (x1 >>> 16) & 0xff;
  const k7 = x1 >>> 24;
  const k8 = (cHi >>> 1) >>> (31 - o);
  // Column-0 byte of each of the nine window blocks.
  const p0 = body + b * r + up * (b - u);
  let p1: number, p2: number, p3: number, p4: number, p5: number, p6: number, p7: number, p8: number;
  if (b + 8 < u + up * (blocks - u)) {
    // All nine blocks exist and have as many columns as block b: one stride (the common case).
    p1 = p0 + cols;
    p2 = p1 + cols;
    p3 = p2 + cols;
    p4 = p3 + cols;
    p5 = p4 + cols;
    p6 = p5 + cols;
    p7 = p6 + cols;
    p8 = p7 + cols;
  } else {
    // The window straddles the first upper block, or runs past the last block (only when
    // m < 64, where the masked row has no bits there: any in-range byte will do, body + j).
    // Kept out of line so the common path stays small enough for V8 to inline its helpers.
    windowBytes(scratch, b, r, u, blocks, body);
    p1 = scratch[0]!;
    p2 = scratch[1]!;
    p3 = scratch[2]!;
    p4 = scratch[3]!;
    p5 = scratch[4]!;
    p6 = scratch[5]!;
    p7 = scratch[6]!;
    p8 = scratch[7]!;
  }
  // Column j's result: the parity of the row AND the solution's bits under the window.
  for (let j = 0; j < cols; j++) {
    let v =
      (k0 & f[p0 + j]!) ^
      (k1 & f[p1 + j]!) ^
      (k2 & f[p2 + j]!) ^
      (k3 & f[p3 + j]!) ^
      (k4 & f[p4 + j]!) ^
      (k5 & f[p5 + j]!) ^
      (k6 & f[p6 + j]!) ^
      (k7 & f[p7 + j]!) ^
      (k8 & f[p8 + j]!);
    v ^= v >>> 4;
    if (((PARITY4 >>> (v & 15)) ^ fp) & 1) return false;
    fp >>>= 1;
  }
  return true;
}

/**
 * Writes to out[0..7] the column-0 byte of blocks b+1 .. b+8, or the body's start for a block
 * past the last one.
 */
function windowBytes(out: Int32Array, b: number, r: number, u: number, blocks: number, body: number): void {
  for (let k = 0; k < 8; k++) {
    const x = b + 1 + k;
    out[k] = x < blocks ? body + blockOffset(x, r, u) : body;
  }
}

const EMPTY_KEY = new Uint8Array(0);

/** A key hashed once for Ribbon filters; see {@link FilterProbe}. */
class RibbonProbe implements FilterProbe {
  private readonly row = new Int32Array(4);
  private readonly scratch = new Int32Array(8);

  constructor() {
    keyRow(EMPTY_KEY, 0, 0, this.row, 0);
  }

  setKey(key: Uint8Array): void {
    keyRow(key, 0, key.length, this.row, 0);
  }

  mayMatch(filter: Uint8Array, start = 0, end = filter.length): boolean {
    return ribbonMayMatch(this.row, filter, start, end, this.scratch);
  }
}

/** Scratch for one-off `keyMayMatch` calls (written fully before being read within a call). */
const oneOff = new RibbonProbe();

/**
 * The Ribbon filter policy. Immutable and stateless between calls: one instance may serve any
 * number of tables and readers.
 *
 * ```ts
 * new RibbonFilterPolicy(10);   // ≈ 10 bits/key, ≈ 0.14% false positives at 10,000 keys
 * new RibbonFilterPolicy(7);    // ≈ Bloom-at-10's rate (≈ 1%) in 30% less space
 * ```
 */
export class RibbonFilterPolicy implements FilterPolicy {
  readonly name = RIBBON_FILTER_POLICY_NAME;
  /** The size budget per distinct key, in bits, header included (fractional allowed). */
  readonly bitsPerKey: number;

  /**
   * @param bitsPerKey a finite number ≥ 1 (default 10). Each key checks at most 32 result bits,
   *   so budgets above ≈ 33 bits/key buy nothing more and are not spent.
   * @throws SieveError INVALID_ARGUMENT on a value out of range
   */
  constructor(bitsPerKey: number = DEFAULT_RIBBON_BITS_PER_KEY) {
    if (typeof bitsPerKey !== 'number' || !Number.isFinite(bitsPerKey) || bitsPerKey < 1) {
      throw invalidArgument(`RibbonFilterPolicy: bitsPerKey must be a finite number >= 1, got ${String(bitsPerKey)}`);
    }
    this.bitsPerKey = bitsPerKey;
  }

  /** Builds a filter over `keys` (any count, duplicates allowed). Returns an owned buffer. */
  createFilter(keys: readonly Uint8Array[]): Uint8Array {
    return buildRibbonFilter(keys, this.bitsPerKey);
  }

  keyMayMatch(key: Uint8Array, filter: Uint8Array): boolean {
    oneOff.setKey(key);
    return oneOff.mayMatch(filter, 0, filter.length);
  }

  newProbe(): FilterProbe {
    return new RibbonProbe();
  }
}

/**
 * The false-positive rate a random absent key sees in `filter`, from its own layout: the mean of
 * 2^−(columns of the start block) over all start slots. 0 for the filter of no keys, 1 for
 * malformed bytes (which match everything).
 */
export function ribbonFalsePositiveRate(filter: Uint8Array): number {
  const hdr = new Int32Array(5);
  if (!readHeader(filter, 0, filter.length, hdr)) return 1;
  const [, r, blocks, u] = hdr as unknown as [number, number, number, number];
  if (blocks === 0) return 0;
  const m = blocks * RIBBON_SLOTS_PER_BLOCK;
  const numStarts = m - Math.min(m, RIBBON_COEFF_BITS) + 1;
  let sum = 0;
  for (let x = 0; x * RIBBON_SLOTS_PER_BLOCK < numStarts; x++) {
    const starts = Math.min(RIBBON_SLOTS_PER_BLOCK, numStarts - x * RIBBON_SLOTS_PER_BLOCK);
    sum += starts * 2 ** -(r + (x >= u ? 1 : 0));
  }
  return sum / numStarts;
}
