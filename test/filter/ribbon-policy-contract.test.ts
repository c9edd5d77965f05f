import { RibbonFilterPolicy, ribbonFalsePositiveRate } from '../../src/filter/ribbon.js';
import { describePolicyContract } from './policy-contract.js';

describePolicyContract('RibbonFilterPolicy', (bitsPerKey) => new RibbonFilterPolicy(bitsPerKey), {
  // The mean of 2^−(columns of the start block) over the filter's start slots: exact for random
  // absent keys, whatever the solution's bits (each checked column is a fresh fair coin).
  theoreticalFpr: (_bitsPerKey, _n, filter) => ribbonFalsePositiveRate(filter),
  bitsPerKeyRange: [1, 40],
  fractionalBitsPerKey: true,
  // The budget covers the whole filter (header included), with at least 64 solution bits: a
  // tiny set may take up to 13 bytes (5-byte header + 8).
  maxFilterBytes: (bitsPerKey, n) => Math.max(Math.floor((n * bitsPerKey) / 8), 13),
  // Truncation changes the body length the header promises: detected, answered "may match".
  truncationMayFalseNegative: false,
});
