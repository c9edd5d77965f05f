/**
 * What the dump tool says about a table's filter: how many filters, how many keys each covers,
 * bits per key and, for the policies whose format stores them, their parameters (either Bloom's
 * k, Ribbon's result bits). Derived from the filter bytes and the key counts the tool found in the
 * data blocks; nothing here is trusted to be well-formed (a malformed filter is reported as such).
 *
 * Block scope (LevelDB's filter block): filter i covers the data blocks that start in
 * [i·2^baseLg, (i+1)·2^baseLg) and holds every key added to them (versions of one user key
 * included, as LevelDB adds them). Table scope: one filter over the distinct user keys.
 */
import { BLOOM_FILTER_POLICY_NAME } from '../filter/bloom.js';
import { RIBBON_FILTER_POLICY_NAME } from '../filter/ribbon.js';
import { BLOCKED_BLOOM_FILTER_POLICY_NAME } from '../filter/blocked-bloom.js';
import { readHeader } from '../filter/ribbon-format.js';
import { getFixed32 } from '../format/coding.js';
import { FilterBlockReader } from '../sstable/filter-block.js';
import type { FilterScope } from '../sstable/metaindex.js';

export interface CountSummary {
  min: number;
  avg: number;
  max: number;
}

export interface FilterSummary {
  /** The policy name from the metaindex (known to this build or not). */
  policy: string;
  scope: FilterScope;
  /** Block scope: log2 of the data range per filter, as stored. */
  baseLg?: number;
  /** Filters in the block (block scope), 1 for table scope. */
  filters: number;
  /** Filters that cover at least one key. */
  filtersWithKeys: number;
  /** Keys the filters were built over (see the file comment). */
  keys: number;
  /** Over the filters with keys; undefined when there are none. */
  keysPerFilter: CountSummary | undefined;
  /** Filter bytes of the filters with keys, their total size. */
  filterBytes: number;
  /**
   * Bits per key of the filters with keys. Bloom: bit-array bits (the trailing k byte excluded)
   * over keys; other policies: all filter bits over keys.
   */
  bitsPerKey: number | undefined;
  /** LevelDB's Bloom and the blocked Bloom: the distinct k values stored in the filters (usually one). */
  bloomK?: number[];
  /** Ribbon: the distinct result-bit counts r (false-positive rate ≈ 2^-r). */
  ribbonResultBits?: number[];
  /** Why the block or some filter could not be parsed, if so. */
  malformed?: string;
}

/**
 * Summarizes a per-block filter block. `keysAt(i)` = keys of the data blocks filter i covers
 * (the caller counted them while reading the data blocks at their offsets).
 */
export function summarizeBlockFilter(policy: string, contents: Uint8Array, keysAt: (filterIndex: number) => number): FilterSummary {
  const reader = new FilterBlockReader(contents);
  const summary = emptySummary(policy, 'block');
  const n = contents.length;
  const arrayOffset = n >= 5 ? getFixed32(contents, n - 5) : -1;
  if (n < 5 || arrayOffset > n - 5 || (n - 5 - arrayOffset) % 4 !== 0) {
    summary.malformed = n < 5 ? `filter block of ${n} bytes is too short` : 'filter offset array out of bounds';
    return summary;
  }
  summary.baseLg = reader.baseLg;
  summary.filters = reader.filterCount;
  const acc = new Accumulator(policy);
  for (let i = 0; i < reader.filterCount; i++) {
    const range = reader.filterRange(i);
    const keys = keysAt(i);
    if (range === undefined) {
      summary.malformed ??= `filter ${i} has a malformed range`;
      continue;
    }
    if (keys === 0) continue;
    acc.add(contents, range.start, range.end, keys);
  }
  return acc.finish(summary);
}

/** Summarizes a whole-table filter over `distinctKeys` user keys. */
export function summarizeTableFilter(policy: string, contents: Uint8Array, distinctKeys: number): FilterSummary {
  const summary = emptySummary(policy, 'table');
  summary.filters = 1;
  const acc = new Accumulator(policy);
  if (distinctKeys > 0) acc.add(contents, 0, contents.length, distinctKeys);
  return acc.finish(summary);
}

function emptySummary(policy: string, scope: FilterScope): FilterSummary {
  return {
    policy,
    scope,
    filters: 0,
    filtersWithKeys: 0,
    keys: 0,
    keysPerFilter: undefined,
    filterBytes: 0,
    bitsPerKey: undefined,
  };
}

class Accumulator {
  readonly #policy: string;
  #count = 0;
  #keys = 0;
  #min = Infinity;
  #max = 0;
  #bytes = 0;
  #bits = 0;
  readonly #bloomK = new Set<number>();
  readonly #ribbonR = new Set<number>();
  #malformed: string | undefined;
  readonly #header = new Int32Array(8);

  constructor(policy: string) {
    this.#policy = policy;
  }

  add(f: Uint8Array, start: number, end: number, keys: number): void {
    this.#count++;
    this.#keys += keys;
    if (keys < this.#min) this.#min = keys;
    if (keys > this.#max) this.#max = keys;
    const len = end - start;
    this.#bytes += len;
    if (this.#policy === BLOOM_FILTER_POLICY_NAME) {
      if (len >= 2) {
        this.#bits += (len - 1) * 8;
        this.#bloomK.add(f[end - 1]!);
      } else {
        this.#malformed ??= `a Bloom filter over ${keys} keys has ${len} bytes`;
      }
    } else {
      this.#bits += len * 8;
      if (this.#policy === RIBBON_FILTER_POLICY_NAME) {
        if (readHeader(f, start, end, this.#header)) this.#ribbonR.add(this.#header[1]!);
        else this.#malformed ??= 'a Ribbon filter has a malformed header';
      } else if (this.#policy === BLOCKED_BLOOM_FILTER_POLICY_NAME) {
        if (len >= 6 && f[start] === 1) this.#bloomK.add(f[start + 1]!);
        else this.#malformed ??= 'a blocked Bloom filter has a malformed header';
      }
    }
  }

  finish(summary: FilterSummary): FilterSummary {
    summary.filtersWithKeys = this.#count;
    summary.keys = this.#keys;
    summary.filterBytes = this.#bytes;
    if (this.#count > 0) {
      summary.keysPerFilter = { min: this.#min, avg: this.#keys / this.#count, max: this.#max };
      summary.bitsPerKey = this.#bits / this.#keys;
    }
    if (this.#policy === BLOOM_FILTER_POLICY_NAME || this.#policy === BLOCKED_BLOOM_FILTER_POLICY_NAME) {
      summary.bloomK = [...this.#bloomK].sort((a, b) => a - b);
    }
    if (this.#policy === RIBBON_FILTER_POLICY_NAME) summary.ribbonResultBits = [...this.#ribbonR].sort((a, b) => a - b);
    if (this.#malformed !== undefined) summary.malformed ??= this.#malformed;
    return summary;
  }
}
