/**
 * Builds `sievekv.Ribbon1` filters (layout and equations: ribbon-format.ts; the why and a worked
 * picture: docs/filters.md). Called by `RibbonFilterPolicy.createFilter`, from any thread; keeps
 * no state between calls (scratch is allocated per call and dropped).
 *
 * Standard Ribbon (Dillinger & Walzer 2021) with 64-bit coefficient rows: each key is one linear
 * equation over GF(2) in the solution's slots. Banding ("on-the-fly Gaussian elimination") keeps
 * at most one row per pivot slot; a new row is xor-ed with the row at its leading slot until it
 * finds a free pivot, or becomes all-zero: then its fingerprint must have become zero too
 * (a duplicate key, or a dependent but consistent row) or the system has no solution. Back
 * substitution from the last slot down then fixes every slot's result bits (free slots get 0).
 *
 * Sizing: m slots for n keys with m/n just above what 64-bit banding needs to succeed with good
 * probability (`slotsFor`, measured: see docs/filters.md); the byte budget n·bitsPerKey is then
 * spread over the blocks as r or r + 1 columns, so the result bits per key are fractional.
 * Construction fails with small probability; a failure retries with the next seed (a fresh random
 * system), and every few seeds also adds slots. If every attempt fails — never seen in practice —
 * the result is a filter that matches everything: correct, just useless.
 */
import {
  RIBBON_COEFF_BITS,
  RIBBON_MAX_BLOCKS,
  RIBBON_MAX_COLUMNS,
  RIBBON_SLOTS_PER_BLOCK,
  blockOffset,
  bodyBytes,
  headerBytes,
  keyRow,
  rowFromHash,
  seededRowLow,
  seededStart,
  startSlot,
  writeHeader,
} from './ribbon-format.js';

/** Seeds tried at one size before adding slots (dense sizes are cheap to retry: more seeds). */
const SEEDS_PER_SIZE = 4;
const SEEDS_PER_DENSE_SIZE = 8;
/** Attempts in all (seeds are one byte, so at most 256). */
const MAX_ATTEMPTS = 64;
/** The solution gets at least this many bits whatever the budget, so tiny sets stay useful. */
const MIN_SOLUTION_BITS = 64;

/**
 * Relative slot overhead ε (m = n·(1 + ε)) at which one seed bands n random keys with probability
 * about 3/4, measured for this format over 16–200 random key sets per n (docs/filters.md,
 * "Sizing"): 3.2% at 1,000 keys, 4.7% at 10,000, 5.2% at 20,000, 6.5% at 50,000, 7% at 100,000 —
 * about +0.47% per doubling of n up to 20,000 and +0.9% beyond, the trend RocksDB's
 * ribbon_config.cc also records for 64-bit rows. Below 1,000 keys 3% suffices.
 */
function overheadFor(n: number): number {
  const lg = Math.log2(n);
  if (lg <= 10) return 0.03;
  if (lg <= 14.3) return 0.032 + 0.0047 * (lg - 10);
  return 0.0522 + 0.009 * (lg - 14.3);
}

/**
 * Slots to try first for n distinct keys (a multiple of 8). Up to 64 slots every row spans all of
 * them (a dense random system of n rows in m unknowns), which is solvable with probability
 * ∏_{i>m−n}(1 − 2^−i): 0.29 with no spare slot, 0.58 with one, 0.77 with two. Dense attempts cost
 * microseconds and each spare block of 8 slots costs a whole column's worth of rate, so dense
 * sizes start with no spare slot and try 8 seeds per size. Above 64 slots, `overheadFor`.
 */
export function slotsFor(n: number): number {
  if (n <= 0) return 0;
  const m = n <= RIBBON_COEFF_BITS ? n : Math.max(n + 2, Math.ceil(n * (1 + overheadFor(n))));
  return Math.ceil(m / RIBBON_SLOTS_PER_BLOCK) * RIBBON_SLOTS_PER_BLOCK;
}

/** Slots for the next size after failures at m: one more block, or about 1/64 more. */
function growSlots(m: number): number {
  const blocks = m < RIBBON_COEFF_BITS ? 1 : Math.ceil(m / 64 / RIBBON_SLOTS_PER_BLOCK);
  return m + blocks * RIBBON_SLOTS_PER_BLOCK;
}

/** The column layout for n keys in `blocks` blocks under a budget of bitsPerKey. */
export interface ColumnLayout {
  blocks: number;
  r: number;
  upperStart: number;
}

export function columnLayout(n: number, bitsPerKey: number, blocks: number): ColumnLayout {
  // The budget covers the whole filter: the header comes out of it (bounded by its longest form).
  const budgetBits = Math.max(Math.floor(n * bitsPerKey) - 8 * headerBytes(blocks, blocks), MIN_SOLUTION_BITS);
  const columnBytes = Math.floor(budgetBits / 8);
  let r = Math.floor(columnBytes / blocks);
  let extra = columnBytes - r * blocks;
  // Below 64 slots every key starts in block 0: an extra column in later blocks would serve none.
  if (blocks * RIBBON_SLOTS_PER_BLOCK <= RIBBON_COEFF_BITS) extra = 0;
  if (r >= RIBBON_MAX_COLUMNS) {
    r = RIBBON_MAX_COLUMNS;
    extra = 0;
  }
  return { blocks, r, upperStart: blocks - extra };
}

/** Banding scratch for one attempt: per slot, the pivot row's coefficient halves and result. */
interface Band {
  lo: Int32Array;
  hi: Int32Array;
  res: Int32Array;
}

/**
 * Inserts every key's equation for this layout and seed. Returns false if the system has no
 * solution. On success `band` holds one row per occupied pivot slot, each relative to its pivot
 * (bit 0 set), with support inside [0, m).
 */
function bandAll(rows: Int32Array, n: number, layout: ColumnLayout, seed: number, band: Band): boolean {
  const m = layout.blocks * RIBBON_SLOTS_PER_BLOCK;
  const w = m < RIBBON_COEFF_BITS ? m : RIBBON_COEFF_BITS;
  const numStarts = m - w + 1;
  const maskLo = w >= 32 ? -1 : (1 << w) - 1;
  const maskHi = w >= 64 ? -1 : w <= 32 ? 0 : (1 << (w - 32)) - 1;
  const { r, upperStart } = layout;
  const { lo, hi, res } = band;
  lo.fill(0, 0, m);
  for (let k = 4 * n - 4; k >= 0; k -= 4) {
    const y = seededStart(rows[k]!, seed);
    let i = startSlot(y, numStarts);
    const cols = r + (i >>> 3 >= upperStart ? 1 : 0);
    let cLo = seededRowLow(rows[k + 1]!, y) & maskLo;
    let cHi = rows[k + 2]! & maskHi;
    // Bits the key does not check are left 0: a free choice that cannot make the system fail.
    const full = rows[k + 3]!;
    let fp = cols >= 32 ? full : full & ((1 << cols) - 1);
    for (;;) {
      const pivotLo = lo[i]!;
      if ((pivotLo & 1) === 0) {
        lo[i] = cLo;
        hi[i] = cHi;
        res[i] = fp;
        break;
      }
      cLo ^= pivotLo;
      cHi ^= hi[i]!;
      fp ^= res[i]!;
      if (cLo !== 0) {
        const t = 31 - Math.clz32(cLo & -cLo); // ≥ 1: bit 0 was just cleared
        cLo = (cLo >>> t) | (cHi << (32 - t));
        cHi >>>= t;
        i += t;
      } else if (cHi !== 0) {
        const t = 31 - Math.clz32(cHi & -cHi);
        cLo = cHi >>> t;
        cHi = 0;
        i += 32 + t;
      } else {
        if (fp !== 0) return false;
        break; // redundant: a duplicate, or implied by rows already in
      }
    }
  }
  return true;
}

/** Back substitution: every slot's result bits, from the last slot down; free slots get 0. */
function solve(band: Band, m: number): Int32Array {
  const sol = new Int32Array(m);
  const { lo, hi, res } = band;
  for (let i = m - 1; i >= 0; i--) {
    let cLo = lo[i]!;
    if ((cLo & 1) === 0) continue;
    let acc = res[i]!;
    cLo &= ~1;
    while (cLo !== 0) {
      acc ^= sol[i + 31 - Math.clz32(cLo & -cLo)]!;
      cLo &= cLo - 1;
    }
    let cHi = hi[i]!;
    while (cHi !== 0) {
      acc ^= sol[i + 63 - Math.clz32(cHi & -cHi)]!;
      cHi &= cHi - 1;
    }
    sol[i] = acc;
  }
  return sol;
}

function serialize(sol: Int32Array, layout: ColumnLayout, seed: number): Uint8Array {
  const { blocks, r, upperStart } = layout;
  const header = headerBytes(blocks, upperStart);
  const out = new Uint8Array(header + bodyBytes(blocks, r, upperStart));
  const body = writeHeader(out, { seed, r, blocks, upperStart, headerBytes: header });
  for (let x = 0; x < blocks; x++) {
    const cols = r + (x >= upperStart ? 1 : 0);
    const at = body + blockOffset(x, r, upperStart);
    const s = x * RIBBON_SLOTS_PER_BLOCK;
    for (let j = 0; j < cols; j++) {
      let byte = 0;
      for (let t = 0; t < RIBBON_SLOTS_PER_BLOCK; t++) byte |= ((sol[s + t]! >>> j) & 1) << t;
      out[at + j] = byte;
    }
  }
  return out;
}

/** The filter of no keys: zero blocks. Matches nothing. */
function emptyFilter(): Uint8Array {
  const out = new Uint8Array(headerBytes(0, 0));
  writeHeader(out, { seed: 0, r: 0, blocks: 0, upperStart: 0, headerBytes: out.length });
  return out;
}

/** One block whose keys check no column: matches everything. The builder's last resort. */
function matchAllFilter(): Uint8Array {
  const out = new Uint8Array(headerBytes(1, 1));
  writeHeader(out, { seed: 0, r: 0, blocks: 1, upperStart: 1, headerBytes: out.length });
  return out;
}

/**
 * Each key's row (`keyRow`, 4 words per key), dropping adjacent duplicates (sorted input puts all
 * duplicates together; others are caught by banding as redundant rows).
 */
function keyRows(keys: readonly Uint8Array[]): { rows: Int32Array; n: number } {
  const rows = new Int32Array(4 * keys.length);
  let n = 0;
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k]!;
    if (addKeyRow(key, 0, key.length, rows, n)) n++;
  }
  return { rows, n };
}

/**
 * Writes the row of `key[start, end)` as row `n` of `rows`; returns false (the row is not kept)
 * when it repeats row n − 1, the rule by which every Ribbon builder drops adjacent duplicates.
 */
export function addKeyRow(key: Uint8Array, start: number, end: number, rows: Int32Array, n: number): boolean {
  const at = 4 * n;
  keyRow(key, start, end, rows, at);
  return !(n > 0 && rows[at] === rows[at - 4] && rows[at + 1] === rows[at - 3]);
}

/** `addKeyRow` for a key whose `keyHash` words are (word0, word1): the same row, the same rule. */
export function addHashedRow(word0: number, word1: number, rows: Int32Array, n: number): boolean {
  const at = 4 * n;
  rows[at] = word0;
  rows[at + 1] = word1;
  rowFromHash(rows, at);
  return !(n > 0 && rows[at] === rows[at - 4] && rows[at + 1] === rows[at - 3]);
}

/** Statistics of the last build, for tests and benchmarks. */
export interface RibbonBuildInfo {
  /** Distinct adjacent keys banded. */
  keys: number;
  /** Attempts made (1 if the first seed succeeded); 0 for an empty set. */
  attempts: number;
  /** True if every attempt failed and the match-everything filter was returned. */
  fellBack: boolean;
}

/** Knobs for tests and measurements; the policy uses none of them. */
export interface RibbonBuildOptions {
  /** Filled with statistics of the build. */
  info?: RibbonBuildInfo;
  /** Attempts before the match-everything fallback (default 64, at most 256). */
  maxAttempts?: number;
  /** Slots to start from instead of `slotsFor(n)` (a multiple of 8). */
  firstSlots?: number;
}

/**
 * Builds a Ribbon filter over `keys` (any count, duplicates and empty keys allowed) with a size
 * budget of about `bitsPerKey` bits per distinct key, header included (at least 64 solution bits).
 * Deterministic: the same keys in the same order give the same bytes. Returns an owned buffer.
 */
export function buildRibbonFilter(
  keys: readonly Uint8Array[],
  bitsPerKey: number,
  options: RibbonBuildOptions = {},
): Uint8Array {
  const { rows, n } = keyRows(keys);
  return buildRibbonFilterFromRows(rows, n, bitsPerKey, options);
}

/**
 * `buildRibbonFilter` for keys already turned into rows: `rows[4i … 4i + 3]` is `keyRow` of the
 * i-th key, adjacent duplicates dropped as `buildRibbonFilter` drops them (the same rows give the
 * same bytes). For builders that hash keys as they arrive (full-filter-block.ts).
 */
export function buildRibbonFilterFromRows(
  rows: Int32Array,
  n: number,
  bitsPerKey: number,
  options: RibbonBuildOptions = {},
): Uint8Array {
  const { info } = options;
  const maxAttempts = Math.min(options.maxAttempts ?? MAX_ATTEMPTS, 256);
  if (info) {
    info.keys = n;
    info.attempts = 0;
    info.fellBack = false;
  }
  if (n === 0) return emptyFilter();
  let m = options.firstSlots ?? slotsFor(n);
  let band: Band | undefined;
  let triesAtSize = 0;
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    if (triesAtSize === (m <= RIBBON_COEFF_BITS ? SEEDS_PER_DENSE_SIZE : SEEDS_PER_SIZE)) {
      m = growSlots(m);
      triesAtSize = 0;
    }
    triesAtSize++;
    const blocks = m / RIBBON_SLOTS_PER_BLOCK;
    if (blocks >= RIBBON_MAX_BLOCKS) break;
    if (band === undefined || band.lo.length < m) {
      band = { lo: new Int32Array(m), hi: new Int32Array(m), res: new Int32Array(m) };
    }
    const layout = columnLayout(n, bitsPerKey, blocks);
    const seed = attempt & 0xff;
    if (info) info.attempts = attempt + 1;
    if (bandAll(rows, n, layout, seed, band)) return serialize(solve(band, m), layout, seed);
  }
  if (info) info.fellBack = true;
  return matchAllFilter();
}
