/**
 * The table-filter policies that `npm run fpr-report` charts and `npm run bench:filters` times.
 * A new policy joins both by adding one entry to {@link FILTER_POLICIES}.
 */
import { BloomFilterPolicy } from '../src/filter/bloom.js';
import type { FilterPolicy } from '../src/filter/policy.js';
import { RibbonFilterPolicy, ribbonFalsePositiveRate } from '../src/filter/ribbon.js';
import { bloomFalsePositiveRate } from '../src/filter/sizing.js';
import { BlockedBloomFilterPolicy, blockedBloomFalsePositiveRate } from '../src/filter/blocked-bloom.js';

export interface PolicyUnderTest {
  /** Short name for legends, table headers and benchmark lines. */
  readonly label: string;
  /** Chart colour (Okabe–Ito palette: distinguishable with common colour-vision deficiencies). */
  readonly color: string;
  /** The policy at a given bits/key budget. */
  make(bitsPerKey: number): FilterPolicy;
  /** The rate theory predicts for random absent keys against `filter`, built over `n` distinct keys. */
  theory(filter: Uint8Array, n: number): number;
  /** How `theory` is computed, for the report's caption. */
  readonly theoryText: string;
  /** The bits/key at which the benchmark runs it: its setting for a rate near 1%. */
  readonly benchBitsPerKey: number;
}

/**
 * LevelDB's Bloom filter: (1 − e^(−kn/m))^k from the filter's actual m (its bit array, after the
 * 64-bit minimum and rounding up to bytes) and k (its last byte).
 */
function bloomTheory(filter: Uint8Array, n: number): number {
  const m = (filter.length - 1) * 8;
  const k = filter[filter.length - 1]!;
  return n === 0 ? 0 : bloomFalsePositiveRate(m / n, k);
}

export const FILTER_POLICIES: readonly PolicyUnderTest[] = [
  {
    label: 'Bloom',
    color: '#0072B2',
    make: (bitsPerKey) => new BloomFilterPolicy(bitsPerKey),
    theory: bloomTheory,
    theoryText: '(1 − e^(−kn/m))^k from the filter’s own m and k',
    benchBitsPerKey: 10,
  },
  {
    label: 'Ribbon',
    color: '#D55E00',
    make: (bitsPerKey) => new RibbonFilterPolicy(bitsPerKey),
    theory: (filter) => ribbonFalsePositiveRate(filter),
    theoryText: 'the mean of 2^−(result bits checked) over the filter’s start blocks, from its own layout',
    benchBitsPerKey: 7,
  },
  {
    label: 'Blocked Bloom',
    color: '#009E73',
    make: (bitsPerKey) => new BlockedBloomFilterPolicy(bitsPerKey),
    theory: (filter) => blockedBloomFalsePositiveRate(filter),
    theoryText: 'the mean over the filter’s 512-bit blocks of (bits set / 512)^k, from its own bits',
    benchBitsPerKey: 10,
  },
];
