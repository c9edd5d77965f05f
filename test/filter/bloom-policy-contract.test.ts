import { BloomFilterPolicy } from '../../src/filter/bloom.js';
import { bloomFalsePositiveRate } from '../../src/filter/sizing.js';
import { describePolicyContract } from './policy-contract.js';

describePolicyContract('BloomFilterPolicy', (bitsPerKey) => new BloomFilterPolicy(bitsPerKey), {
  // (1 − e^(−kn/m))^k from the filter's actual m (its bit array) and k (its last byte), so the
  // 64-bit minimum and the rounding to whole bytes are not counted as error.
  theoreticalFpr: (_bitsPerKey, n, filter) => {
    const m = (filter.length - 1) * 8;
    const k = filter[filter.length - 1]!;
    return bloomFalsePositiveRate(m / n, k);
  },
  bitsPerKeyRange: [1, 40],
  fractionalBitsPerKey: true,
  // LevelDB: max(64, n·b) bits (n·b rounded for fractional b), rounded up to bytes, plus k.
  maxFilterBytes: (bitsPerKey, n) => Math.ceil(Math.max(64, Math.round(n * bitsPerKey)) / 8) + 1,
  // LevelDB's format cannot tell a truncated filter: its last byte is then read as k and the bit
  // count shrinks, so keys may be missed (and an empty filter matches nothing).
  truncationMayFalseNegative: true,
});
