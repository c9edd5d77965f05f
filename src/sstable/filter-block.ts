/**
 * The per-table filter block, as LevelDB's table/filter_block (doc/table_format.md "filter
 * meta block"):
 *
 *   filter[0] … filter[n−1]  fixed32 offset[0] … offset[n−1]  fixed32 arrayOffset  byte baseLg
 *
 * Filter i covers the data blocks whose file offset lies in [i·2^baseLg, (i+1)·2^baseLg) and
 * spans `[offset[i], offset[i+1])` (the last one ends at `arrayOffset`). Ranges without keys get
 * an empty filter (no `createFilter` call). The block stores its own `baseLg` (11: 2 KiB).
 *
 * Builder call order, driven by the table builder: `startBlock(offset)` before the keys of each
 * data block (offsets non-decreasing; the first call may be `startBlock(0)`), `addKey` for the
 * block's user keys, then `finish()` once.
 *
 * Reader contract (a filter can only make reads faster, never wrong): a malformed block (too
 * short, array offset past the end) answers "may match" for everything; so do an index past the
 * last filter and a filter range that is out of order or out of bounds. An empty, well-placed
 * range holds no keys and answers "no match", as in LevelDB.
 */
import { invalidArgument } from '../errors.js';
import { getFixed32, putFixed32 } from '../format/coding.js';
import type { FilterPolicy, FilterProbe } from '../filter/policy.js';
import { BLOOM_HASH_SEED, BloomFilterPolicy } from '../filter/bloom.js';
import { levelDBHashRange } from '../filter/leveldb-hash.js';

/** Persisted in every filter block this builder writes: one filter per 2^11 = 2 KiB. */
export const FILTER_BASE_LG = 11 as const;
const FILTER_BASE = 2 ** FILTER_BASE_LG;

export class FilterBlockBuilder {
  readonly policy: FilterPolicy;
  /**
   * The built-in Bloom policy, whose filters are made from each key's hash: keys are then hashed
   * as they are added and never copied (the same bytes, without a view per key per filter).
   */
  private readonly bloom: BloomFilterPolicy | null;
  /** Bloom path: the hashes of the current filter's keys. */
  private hashes = new Uint32Array(64);
  private numHashes = 0;
  /** Keys of the current filter, back to back in `keyBytes`, split at `keyStarts`. */
  private keyBytes = new Uint8Array(1024);
  private keyBytesLen = 0;
  private readonly keyStarts: number[] = [];
  /** Reused array of views handed to `createFilter`. */
  private readonly keyViews: Uint8Array[] = [];
  /** Filters written so far, back to back. */
  private result = new Uint8Array(1024);
  private resultLen = 0;
  private readonly filterOffsets: number[] = [];
  private finished = false;

  constructor(policy: FilterPolicy) {
    this.policy = policy;
    this.bloom = policy instanceof BloomFilterPolicy ? policy : null;
  }

  /**
   * Announces that the next keys belong to the data block at file offset `blockOffset`. Ends
   * (generates) every filter whose range lies wholly before that block.
   */
  startBlock(blockOffset: number): void {
    if (this.finished) throw invalidArgument('FilterBlockBuilder.startBlock after finish');
    const filterIndex = Math.floor(blockOffset / FILTER_BASE);
    if (!(filterIndex >= this.filterOffsets.length)) {
      throw invalidArgument(`FilterBlockBuilder.startBlock(${blockOffset}): block offsets must not go back`);
    }
    while (filterIndex > this.filterOffsets.length) this.generateFilter();
  }

  /** Adds the user key `key[start, end)` to the current filter (copied). */
  addKey(key: Uint8Array, start = 0, end: number = key.length): void {
    if (this.finished) throw invalidArgument('FilterBlockBuilder.addKey after finish');
    if (this.bloom !== null) {
      if (this.numHashes === this.hashes.length) {
        const grown = new Uint32Array(2 * this.hashes.length);
        grown.set(this.hashes);
        this.hashes = grown;
      }
      this.hashes[this.numHashes++] = levelDBHashRange(key, start, end, BLOOM_HASH_SEED);
      return;
    }
    const n = end - start;
    if (this.keyBytesLen + n > this.keyBytes.length) {
      const grown = new Uint8Array(Math.max(this.keyBytesLen + n, 2 * this.keyBytes.length));
      grown.set(this.keyBytes.subarray(0, this.keyBytesLen));
      this.keyBytes = grown;
    }
    this.keyStarts.push(this.keyBytesLen);
    this.keyBytes.set(start === 0 && end === key.length ? key : key.subarray(start, end), this.keyBytesLen);
    this.keyBytesLen += n;
  }

  /**
   * Generates the last filter and appends the offset array, its offset and `FILTER_BASE_LG`.
   * Returns the block, a view borrowed from the builder (valid while the builder lives; the
   * builder is single-use). Idempotent.
   */
  finish(): Uint8Array {
    if (!this.finished) {
      if (this.keyStarts.length > 0 || this.numHashes > 0) this.generateFilter();
      const arrayOffset = this.resultLen;
      const offsets = this.filterOffsets;
      this.reserve(4 * offsets.length + 5);
      let p = this.resultLen;
      for (let i = 0; i < offsets.length; i++) p = putFixed32(this.result, p, offsets[i]!);
      p = putFixed32(this.result, p, arrayOffset);
      this.result[p++] = FILTER_BASE_LG;
      this.resultLen = p;
      this.finished = true;
    }
    return this.result.subarray(0, this.resultLen);
  }

  private generateFilter(): void {
    this.filterOffsets.push(this.resultLen);
    if (this.bloom !== null) {
      const n = this.numHashes;
      if (n === 0) return; // an empty range: a zero-length filter
      const length = this.bloom.filterLength(n);
      this.reserve(length);
      this.result.fill(0, this.resultLen, this.resultLen + length);
      this.resultLen = this.bloom.writeFilter(this.hashes, n, this.result, this.resultLen);
      this.numHashes = 0;
      return;
    }
    const numKeys = this.keyStarts.length;
    if (numKeys === 0) return; // an empty range: a zero-length filter
    const views = this.keyViews;
    views.length = numKeys;
    const starts = this.keyStarts;
    for (let i = 0; i < numKeys; i++) {
      const end = i + 1 < numKeys ? starts[i + 1]! : this.keyBytesLen;
      views[i] = this.keyBytes.subarray(starts[i]!, end);
    }
    const filter = this.policy.createFilter(views);
    this.reserve(filter.length);
    this.result.set(filter, this.resultLen);
    this.resultLen += filter.length;
    views.length = 0;
    starts.length = 0;
    this.keyBytesLen = 0;
  }

  private reserve(extra: number): void {
    const needed = this.resultLen + extra;
    if (needed <= this.result.length) return;
    const grown = new Uint8Array(Math.max(needed, 2 * this.result.length));
    grown.set(this.result.subarray(0, this.resultLen));
    this.result = grown;
  }
}

/**
 * Answers filter queries from a filter block's bytes (borrowed for the reader's lifetime). The
 * policy is not needed here: the caller's probe (from the policy named in the metaindex) has
 * hashed the key once for every table it asks.
 */
export class FilterBlockReader {
  readonly data: Uint8Array;
  /** log2 of the data-offset range per filter, as stored. */
  readonly baseLg: number;
  /** Number of filters; 0 for a malformed block (everything may match). */
  readonly filterCount: number;
  /** Offset of the filter offset array (= end of the filters). */
  private readonly arrayOffset: number;
  private readonly base: number;

  constructor(contents: Uint8Array) {
    this.data = contents;
    const n = contents.length;
    if (n < 5) {
      this.baseLg = 0;
      this.filterCount = 0;
      this.arrayOffset = 0;
      this.base = 1;
      return;
    }
    this.baseLg = contents[n - 1]!;
    this.base = 2 ** this.baseLg;
    const arrayOffset = getFixed32(contents, n - 5);
    if (arrayOffset > n - 5) {
      this.filterCount = 0;
      this.arrayOffset = 0;
      return;
    }
    this.arrayOffset = arrayOffset;
    this.filterCount = Math.floor((n - 5 - arrayOffset) / 4);
  }

  /** False only if the data block at `blockOffset` certainly holds no key `probe` was set to. */
  keyMayMatch(blockOffset: number, probe: FilterProbe): boolean {
    const index = Math.floor(blockOffset / this.base);
    if (index < this.filterCount) {
      const at = this.arrayOffset + 4 * index;
      const start = getFixed32(this.data, at);
      const limit = getFixed32(this.data, at + 4); // for the last filter: arrayOffset itself
      if (start <= limit && limit <= this.arrayOffset) {
        if (start === limit) return false; // an empty filter: no keys in this range
        return probe.mayMatch(this.data, start, limit);
      }
    }
    return true; // malformed or missing: may match
  }

  /**
   * The bytes `[start, end)` of filter `i` inside `data`, or undefined if its range is
   * malformed (for the dump tool's filter summary). Requires `0 <= i < filterCount`.
   */
  filterRange(i: number): { start: number; end: number } | undefined {
    const at = this.arrayOffset + 4 * i;
    const start = getFixed32(this.data, at);
    const end = getFixed32(this.data, at + 4);
    return start <= end && end <= this.arrayOffset ? { start, end } : undefined;
  }
}
