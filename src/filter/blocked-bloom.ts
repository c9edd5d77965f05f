/**
 * `BlockedBloomFilterPolicy` (`sievekv.BlockedBloom1`): a Bloom filter whose probes for one key
 * all fall in one 64-byte block (a cache line), after RocksDB's FastLocalBloom (Putze, Sanders &
 * Singler, "Cache-, hash- and space-efficient Bloom filters", 2007). The whole-table filter sievekv
 * writes by default: it is built in a tenth of a Ribbon filter's time (one bit set per probe, no
 * linear system to solve), and a lookup reads one cache line of it. For the same false-positive
 * rate it takes about 50% more space than Ribbon (15 bits/key for ≈ 0.13%, Ribbon's rate at 10):
 * a table's data is a hundred times larger, so the build time is what counts. Ribbon stays the
 * policy for space (docs/filters.md).
 *
 * Layout (docs/filters.md draws it):
 *
 *   [version: 1 byte = 1][k: 1 byte][B: fixed32][block 0: 64 bytes] … [block B−1: 64 bytes]
 *
 * The header states B, so a cut filter is told from the filter of no keys. A key with `keyHash` words (h, c) (ribbon-format.ts: the 64-bit hash a
 * table builder computes once per key for its key sketch) lives in block ⌊h · B / 2^32⌋ (h
 * unsigned) and sets k bits there: with x = c, then x = x · 0x9e3779b9 (mod 2^32) after each, the
 * bits x >>> 23 (0..511) — bit i of a block is bit i & 7 of its byte i >>> 3.
 *
 * Reading rules: bytes that are not a version-1 filter (short, a length that is not 6 + 64·B, k
 * outside 1..MAX_PROBES, B ≥ 2^26), an empty range or a range outside the buffer answer "may match"; the
 * filter of no keys (B = 0) answers "no match". Reads never leave `filter[start, end)` and
 * allocate nothing.
 */
import { invalidArgument } from '../errors.js';
import { getFixed32, putFixed32 } from '../format/coding.js';
import type { FilterPolicy, FilterProbe } from './policy.js';
import { keyHash } from './ribbon-format.js';

/** Persisted in every table's metaindex as `fullfilter.sievekv.BlockedBloom1`: never change. */
export const BLOCKED_BLOOM_FILTER_POLICY_NAME = 'sievekv.BlockedBloom1' as const;
/** Format version 1: this file's layout, block choice and probe sequence. Persisted: never change. */
export const BLOCKED_BLOOM_FORMAT_VERSION = 1 as const;
/** Bytes per block: one cache line. Persisted: never change. */
export const BLOCKED_BLOOM_BLOCK_BYTES = 64 as const;
/** The probe sequence's multiplier (2^32 / golden ratio). Persisted: never change. */
const PROBE_MULTIPLIER = 0x9e3779b9;
/** Most probes a filter may store; more would only cost time. */
export const BLOCKED_BLOOM_MAX_PROBES = 24;
/** version, k, B (fixed32). */
const HEADER_BYTES = 6;
/** Blocks are fewer than this (a 4 GiB filter), so offsets stay exact. Persisted: never change. */
const MAX_BLOCKS = 2 ** 26;

/** Bits/key when none is given: ≈ 0.13% false positives, Ribbon-at-10's rate. */
export const DEFAULT_BLOCKED_BLOOM_BITS_PER_KEY = 15;

/** Probes per key for a budget of `bitsPerKey`: LevelDB's rule, ⌊0.69 · b⌋ in 1..MAX_PROBES. */
export function blockedBloomProbes(bitsPerKey: number): number {
  return Math.min(BLOCKED_BLOOM_MAX_PROBES, Math.max(1, Math.floor(bitsPerKey * 0.69)));
}

/** Blocks for `keys` distinct keys at `bitsPerKey`: 0 for none, else at least 1. */
export function blockedBloomBlocks(keys: number, bitsPerKey: number): number {
  return keys === 0 ? 0 : Math.max(1, Math.ceil((keys * bitsPerKey) / (8 * BLOCKED_BLOOM_BLOCK_BYTES)));
}

/** The byte where block ⌊h · blocks / 2^32⌋ starts, past the header. */
function blockStart(h: number, blocks: number): number {
  // h · blocks < 2^32 · 2^26 < 2^53: exact in a double.
  return HEADER_BYTES + Math.floor(((h >>> 0) * blocks) / 4294967296) * BLOCKED_BLOOM_BLOCK_BYTES;
}

/** Sets the k bits of the key with keyHash words (h, c) in `f` (laid out for `blocks` blocks). */
function setKeyBits(f: Uint8Array, blocks: number, k: number, h: number, c: number): void {
  const at = blockStart(h, blocks);
  let x = c;
  for (let i = 0; i < k; i++) {
    const bit = x >>> 23;
    f[at + (bit >>> 3)]! |= 1 << (bit & 7);
    x = Math.imul(x, PROBE_MULTIPLIER);
  }
}

/**
 * The filter over the keys whose keyHash words are hashes[2i], hashes[2i + 1] for i < n (n
 * distinct keys; a repeated key only sets its bits again). Returns an owned array.
 */
export function buildBlockedBloomFromHashes(hashes: Int32Array, n: number, bitsPerKey: number): Uint8Array {
  const blocks = blockedBloomBlocks(n, bitsPerKey);
  const k = blockedBloomProbes(bitsPerKey);
  const f = new Uint8Array(HEADER_BYTES + blocks * BLOCKED_BLOOM_BLOCK_BYTES);
  f[0] = BLOCKED_BLOOM_FORMAT_VERSION;
  f[1] = k;
  putFixed32(f, 2, blocks);
  for (let i = 0; i < n; i++) setKeyBits(f, blocks, k, hashes[2 * i]!, hashes[2 * i + 1]!);
  return f;
}

/** Tests the key with keyHash words (h, c) against the filter in `f[start, end)` (reading rules above). */
function blockedBloomMayMatch(h: number, c: number, f: Uint8Array, start: number, end: number): boolean {
  if (!(start >= 0 && end <= f.length && end - start >= HEADER_BYTES)) return true;
  const k = f[start + 1]!;
  const blocks = getFixed32(f, start + 2);
  if (f[start] !== BLOCKED_BLOOM_FORMAT_VERSION || k < 1 || k > BLOCKED_BLOOM_MAX_PROBES || blocks >= MAX_BLOCKS) return true;
  if (end - start !== HEADER_BYTES + blocks * BLOCKED_BLOOM_BLOCK_BYTES) return true;
  if (blocks === 0) return false; // the filter of no keys
  const at = start + blockStart(h, blocks);
  let x = c;
  for (let i = 0; i < k; i++) {
    const bit = x >>> 23;
    if ((f[at + (bit >>> 3)]! & (1 << (bit & 7))) === 0) return false;
    x = Math.imul(x, PROBE_MULTIPLIER);
  }
  return true;
}

/**
 * 0 if the well-formed filter `f` (a whole buffer) rules out the key hashed to (h, c), else 1;
 * 1 for a malformed filter, as `blockedBloomMayMatch`. No early exit: every probe bit is read and
 * ANDed, so that nothing but the (predictable) header checks branches on the filter's bytes, and a
 * caller looping over several filters has their cache misses in flight at once.
 */
function blockedBloomMayMatchBit(h: number, c: number, f: Uint8Array): number {
  const length = f.length;
  if (length < HEADER_BYTES) return 1;
  const k = f[1]!;
  const blocks = getFixed32(f, 2);
  if (f[0] !== BLOCKED_BLOOM_FORMAT_VERSION || k < 1 || k > BLOCKED_BLOOM_MAX_PROBES || blocks >= MAX_BLOCKS) return 1;
  if (length !== HEADER_BYTES + blocks * BLOCKED_BLOOM_BLOCK_BYTES) return 1;
  if (blocks === 0) return 0; // the filter of no keys
  const at = blockStart(h, blocks);
  let x = c;
  let all = 1;
  for (let i = 0; i < k; i++) {
    const bit = x >>> 23;
    all &= f[at + (bit >>> 3)]! >>> (bit & 7);
    x = Math.imul(x, PROBE_MULTIPLIER);
  }
  return all & 1;
}

/** `blockedBloomMayMatchMany`'s answers: not asked, asked (then: may match), ruled out. */
export const SKIP = 0;
export const MAY_MATCH = 1;
export const RULED_OUT = 2;

/**
 * Asks several whole-table filters about one key at once. On entry `answers[i]` is MAY_MATCH for
 * each filter to ask and SKIP for the others; on return the asked ones whose filter rules the key
 * out are RULED_OUT (an undefined entry, or a malformed filter, may match). `probe` must come from
 * a BlockedBloomFilterPolicy (`newProbe`) with its key set (any other probe leaves every answer
 * as it is), and every filter must be that policy's. Equivalent to `probe.mayMatch` per filter asked; faster when the filters are not in
 * the CPU's cache, as a lookup over several level-0 tables finds them: their loads overlap (see
 * blockedBloomMayMatchBit). `answers` may be longer than `filters`; the rest is left as it is.
 */
export function blockedBloomMayMatchMany(probe: FilterProbe, filters: readonly (Uint8Array | undefined)[], answers: Uint8Array): void {
  if (!(probe instanceof BlockedBloomProbe)) return; // another policy's probe: every answer may match
  const h = probe.hash[0]!;
  const c = probe.hash[1]!;
  const n = Math.min(filters.length, answers.length);
  // First one load from each filter's block, with nothing between them: the CPU has all their
  // cache misses in flight at once. Then the probes, which find the blocks in cache.
  let touched = 0;
  for (let i = 0; i < n; i++) {
    const f = filters[i];
    if (answers[i] === SKIP || f === undefined || f.length < HEADER_BYTES + BLOCKED_BLOOM_BLOCK_BYTES) continue;
    const blocks = getFixed32(f, 2);
    const at = blockStart(h, blocks);
    if (at < f.length) touched |= f[at]!;
  }
  touchSink.touched = touched;
  for (let i = 0; i < n; i++) {
    const f = filters[i];
    if (answers[i] !== SKIP && f !== undefined) answers[i] = RULED_OUT - blockedBloomMayMatchBit(h, c, f);
  }
}

/** Written by blockedBloomMayMatchMany's first pass, so that its loads are not optimised away. */
const touchSink = { touched: 0 };

/** A key hashed once for blocked Bloom filters; see {@link FilterProbe}. */
class BlockedBloomProbe implements FilterProbe {
  /** The key's two hash words (readonly outside this file; blockedBloomMayMatchMany reads them). */
  readonly hash = new Int32Array(2);

  constructor() {
    keyHash(EMPTY_KEY, 0, 0, this.hash, 0);
  }

  setKey(key: Uint8Array): void {
    keyHash(key, 0, key.length, this.hash, 0);
  }

  mayMatch(filter: Uint8Array, start = 0, end = filter.length): boolean {
    return blockedBloomMayMatch(this.hash[0]!, this.hash[1]!, filter, start, end);
  }
}

const EMPTY_KEY = new Uint8Array(0);
/** Scratch for one-off `keyMayMatch` calls and `createFilter` (written before being read). */
const scratchHash = new Int32Array(2);

/**
 * The blocked Bloom filter policy. Immutable and stateless between calls: one instance may serve
 * any number of tables and readers.
 *
 * ```ts
 * new BlockedBloomFilterPolicy(15);   // ≈ 0.13% false positives, 10 probes in one cache line
 * new BlockedBloomFilterPolicy(10);   // ≈ 0.95%, LevelDB's Bloom rate
 * ```
 */
export class BlockedBloomFilterPolicy implements FilterPolicy {
  readonly name = BLOCKED_BLOOM_FILTER_POLICY_NAME;
  /** The size budget per distinct key, in bits (fractional allowed; whole blocks are rounded up). */
  readonly bitsPerKey: number;
  /** Probes per key, stored in each filter. */
  readonly probes: number;

  /**
   * @param bitsPerKey a finite number ≥ 1 (default 15)
   * @throws SieveError INVALID_ARGUMENT on a value out of range
   */
  constructor(bitsPerKey: number = DEFAULT_BLOCKED_BLOOM_BITS_PER_KEY) {
    if (typeof bitsPerKey !== 'number' || !Number.isFinite(bitsPerKey) || bitsPerKey < 1) {
      throw invalidArgument(`BlockedBloomFilterPolicy: bitsPerKey must be a finite number >= 1, got ${String(bitsPerKey)}`);
    }
    this.bitsPerKey = bitsPerKey;
    this.probes = blockedBloomProbes(bitsPerKey);
  }

  /** Builds a filter over `keys` (any count, duplicates allowed). Returns an owned buffer. */
  createFilter(keys: readonly Uint8Array[]): Uint8Array {
    const hashes = new Int32Array(2 * keys.length);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      keyHash(key, 0, key.length, hashes, 2 * i);
    }
    return buildBlockedBloomFromHashes(hashes, keys.length, this.bitsPerKey);
  }

  keyMayMatch(key: Uint8Array, filter: Uint8Array): boolean {
    keyHash(key, 0, key.length, scratchHash, 0);
    return blockedBloomMayMatch(scratchHash[0]!, scratchHash[1]!, filter, 0, filter.length);
  }

  newProbe(): FilterProbe {
    return new BlockedBloomProbe();
  }
}

/**
 * The false-positive rate a random absent key sees in `filter`, from its own bits: the mean over
 * its blocks of (bits set / 512)^k. 0 for the filter of no keys, 1 for malformed bytes.
 */
export function blockedBloomFalsePositiveRate(filter: Uint8Array): number {
  if (filter.length < HEADER_BYTES) return 1;
  const k = filter[1]!;
  const blocks = getFixed32(filter, 2);
  if (filter[0] !== BLOCKED_BLOOM_FORMAT_VERSION || k < 1 || k > BLOCKED_BLOOM_MAX_PROBES || blocks >= MAX_BLOCKS) return 1;
  if (filter.length !== HEADER_BYTES + blocks * BLOCKED_BLOOM_BLOCK_BYTES) return 1;
  if (blocks === 0) return 0;
  let sum = 0;
  for (let b = 0; b < blocks; b++) {
    let set = 0;
    for (let i = 0; i < BLOCKED_BLOOM_BLOCK_BYTES; i++) {
      let v = filter[HEADER_BYTES + b * BLOCKED_BLOOM_BLOCK_BYTES + i]!;
      while (v !== 0) {
        v &= v - 1;
        set++;
      }
    }
    sum += (set / (8 * BLOCKED_BLOOM_BLOCK_BYTES)) ** k;
  }
  return sum / blocks;
}
