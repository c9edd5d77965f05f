import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode, isSieveError } from '../../src/errors.js';
import {
  bitsPerKeyForFalsePositiveRate,
  bloomFalsePositiveRate,
  bloomHashCount,
  cassandraBloomSpec,
  MAX_BLOOM_HASH_COUNT,
  optimalNumOfBits,
  optimalNumOfHashFunctions,
} from '../../src/filter/sizing.js';

function expectInvalid(fn: () => unknown): void {
  let thrown: unknown;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  expect(isSieveError(thrown, ErrorCode.INVALID_ARGUMENT), String(thrown)).toBe(true);
}

const LN2 = Math.log(2);
const probability = fc.double({ min: 1e-12, max: 0.999, noNaN: true });

describe('bloomHashCount (LevelDB / DezhouKV)', () => {
  it('is floor(bitsPerKey * 0.69) clamped to 1..30', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1000, noNaN: true }), (b) => {
        const k = bloomHashCount(b);
        expect(Number.isInteger(k)).toBe(true);
        expect(k).toBeGreaterThanOrEqual(1);
        expect(k).toBeLessThanOrEqual(MAX_BLOOM_HASH_COUNT);
        const raw = Math.floor(b * 0.69);
        if (raw >= 1 && raw <= 30) expect(k).toBe(raw);
        else expect(k).toBe(raw < 1 ? 1 : 30);
      }),
    );
  });

  it('rounds down as LevelDB does, including the double product 10 * 0.69 = 6.8999…', () => {
    // util/bloom.cc: k = static_cast<size_t>(bits_per_key * 0.69), computed in doubles.
    expect(bloomHashCount(10)).toBe(6);
    expect(bloomHashCount(1)).toBe(1); // 0.69 → 0 → clamped to 1
    expect(bloomHashCount(0)).toBe(1);
    expect(bloomHashCount(2)).toBe(1); // 1.38
    expect(bloomHashCount(3)).toBe(2); // 2.07
    expect(bloomHashCount(43)).toBe(29); // 29.67
    expect(bloomHashCount(44)).toBe(30); // 30.36
    expect(bloomHashCount(1000)).toBe(30); // clamp
  });

  it('rejects NaN, infinities and negatives', () => {
    for (const bad of [Number.NaN, Infinity, -Infinity, -1, -0.5]) expectInvalid(() => bloomHashCount(bad));
  });
});

describe('optimalNumOfBits (Guava)', () => {
  it('is trunc(-n ln p / (ln 2)^2)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e9 }), probability, (n, p) => {
        const m = optimalNumOfBits(n, p);
        const exact = (-n * Math.log(p)) / (LN2 * LN2);
        expect(Number.isInteger(m)).toBe(true);
        expect(m).toBeLessThanOrEqual(exact);
        expect(m).toBeGreaterThan(exact - 1);
      }),
    );
  });

  it('grows with n and with smaller p', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e6 }), probability, probability, (n, p1, p2) => {
        const [lo, hi] = p1 < p2 ? [p1, p2] : [p2, p1];
        expect(optimalNumOfBits(n, lo)).toBeGreaterThanOrEqual(optimalNumOfBits(n, hi));
        expect(optimalNumOfBits(n + 1, lo)).toBeGreaterThanOrEqual(optimalNumOfBits(n, lo));
      }),
    );
  });

  it('treats p = 0 as Double.MIN_VALUE, like Guava, and n = 0 as zero bits', () => {
    expect(optimalNumOfBits(1, 0)).toBe(optimalNumOfBits(1, Number.MIN_VALUE));
    // ln(4.9e-324) = -744.44…, / (ln 2)^2 = 1549.4…
    expect(optimalNumOfBits(1, 0)).toBe(Math.trunc(-Math.log(Number.MIN_VALUE) / (LN2 * LN2)));
    expect(optimalNumOfBits(1000, 0)).toBeGreaterThan(1_549_000);
    expect(Object.is(optimalNumOfBits(0, 0.01), 0)).toBe(true);
  });

  it('rejects bad n and p', () => {
    for (const [n, p] of [
      [-1, 0.01],
      [1.5, 0.01],
      [Number.NaN, 0.01],
      [10, -0.1],
      [10, 1],
      [10, 2],
      [10, Number.NaN],
    ] as const) {
      expectInvalid(() => optimalNumOfBits(n, p));
    }
  });
});

describe('optimalNumOfHashFunctions (Guava)', () => {
  it('is max(1, round(m / n * ln 2))', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1e7 }), fc.integer({ min: 0, max: 1e9 }), (n, m) => {
        const k = optimalNumOfHashFunctions(n, m);
        const exact = (m / n) * LN2;
        expect(Number.isInteger(k)).toBe(true);
        expect(k).toBeGreaterThanOrEqual(1);
        if (exact >= 0.5) expect(Math.abs(k - exact)).toBeLessThanOrEqual(0.5);
        else expect(k).toBe(1);
      }),
    );
  });

  it('with optimalNumOfBits gives a rate close to p (the pair is near-optimal)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1000, max: 1e6 }), fc.double({ min: 1e-6, max: 0.3, noNaN: true }), (n, p) => {
        const m = optimalNumOfBits(n, p);
        const k = optimalNumOfHashFunctions(n, m);
        const rate = bloomFalsePositiveRate(m / n, k);
        // Rounding k away from the real optimum m/n·ln 2 costs at most ~15% at these p.
        expect(rate).toBeLessThan(p * 1.15);
        expect(rate).toBeGreaterThan(p * 0.95);
      }),
    );
  });

  it('rounds half up like Java Math.round, and never returns 0', () => {
    expect(optimalNumOfHashFunctions(1, 0)).toBe(1);
    expect(optimalNumOfHashFunctions(10, 1)).toBe(1); // 0.069 → 0 → 1
    expect(optimalNumOfHashFunctions(100, 1000)).toBe(7); // 6.93
    expect(optimalNumOfHashFunctions(1000, 9585)).toBe(7); // 6.64
    expect(optimalNumOfHashFunctions(100, 938)).toBe(7); // 6.5017 → 7
    expect(optimalNumOfHashFunctions(100, 930)).toBe(6); // 6.4463 → 6
  });

  it('rejects bad n and m', () => {
    for (const [n, m] of [
      [0, 10],
      [-1, 10],
      [1.5, 10],
      [10, -1],
      [10, 2.5],
      [10, Number.NaN],
    ] as const) {
      expectInvalid(() => optimalNumOfHashFunctions(n, m));
    }
  });
});

describe('bitsPerKeyForFalsePositiveRate', () => {
  it('is -ln p / (ln 2)^2, and at k = b ln 2 the theory gives back p', () => {
    fc.assert(
      fc.property(probability, (p) => {
        const b = bitsPerKeyForFalsePositiveRate(p);
        expect(b).toBeCloseTo(-Math.log(p) / (LN2 * LN2), 9);
        // (1 - e^{-k/b})^k at real k = b ln 2 is (1/2)^{b ln 2} = p.
        expect(Math.pow(0.5, b * LN2) / p).toBeCloseTo(1, 9);
      }),
    );
    expect(bitsPerKeyForFalsePositiveRate(0.01)).toBeCloseTo(9.585, 3);
  });

  it('rejects p outside (0, 1)', () => {
    for (const p of [0, 1, -0.5, 1.5, Number.NaN]) expectInvalid(() => bitsPerKeyForFalsePositiveRate(p));
  });
});

describe('bloomFalsePositiveRate', () => {
  it('is (1 - e^(-k/b))^k', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.1, max: 100, noNaN: true }), fc.integer({ min: 0, max: 40 }), (b, k) => {
        const rate = bloomFalsePositiveRate(b, k);
        expect(rate).toBe(Math.pow(1 - Math.exp(-k / b), k));
        expect(rate).toBeGreaterThan(0);
        expect(rate).toBeLessThanOrEqual(1);
      }),
    );
  });

  it('falls as bits per key grow (k fixed)', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.1, max: 50, noNaN: true }), fc.integer({ min: 1, max: 30 }), (b, k) => {
        expect(bloomFalsePositiveRate(b + 1, k)).toBeLessThan(bloomFalsePositiveRate(b, k));
      }),
    );
  });

  it('rejects bad input', () => {
    for (const [b, k] of [
      [0, 1],
      [-1, 1],
      [Infinity, 1],
      [Number.NaN, 1],
      [10, -1],
      [10, 1.5],
    ] as const) {
      expectInvalid(() => bloomFalsePositiveRate(b, k));
    }
  });
});

describe('cassandraBloomSpec (Cassandra BloomCalculations.computeBloomSpec)', () => {
  // Published vectors: entries of the probability table in Cassandra's
  // src/java/org/apache/cassandra/utils/BloomCalculations.java (from Fan, Cao et al., "Summary
  // Cache"), as printed there: [buckets per element, k, rate with its printed digits].
  const published: Array<[number, number, string]> = [
    [2, 1, '0.393'],
    [2, 2, '0.400'],
    [3, 2, '0.237'],
    [5, 3, '0.092'],
    [5, 4, '0.092'],
    [7, 5, '0.0347'],
    [8, 5, '0.0217'],
    [10, 7, '0.00819'],
    [10, 8, '0.00846'],
    [12, 8, '0.00314'],
    [13, 9, '0.00194'],
    [15, 10, '0.000744'],
    [17, 12, '0.000284'],
    [20, 1, '0.0488'],
    [20, 14, '6.71e-05'],
  ];

  it('computes the published table entries from the formula', () => {
    for (const [b, k, printed] of published) {
      const mantissa = printed.split('e')[0]!.replace('.', '').replace(/^0+/, '');
      const rounded = Number(bloomFalsePositiveRate(b, k).toPrecision(mantissa.length));
      expect(rounded, `b=${b} k=${k}`).toBe(Number(printed));
    }
  });

  it("picks the same optimal k per row as Cassandra's optKPerBuckets", () => {
    // Published vector derived from Cassandra's table: the column of each row's minimum
    // (first minimum on ties), rows b = 2..20.
    const optKPerBuckets = [1, 2, 3, 3, 4, 5, 6, 6, 7, 8, 8, 9, 10, 10, 11, 12, 12, 13, 14];
    for (let b = 2; b <= 20; b++) {
      let bestK = 1;
      for (let k = 2; k <= 40; k++) if (bloomFalsePositiveRate(b, k) < bloomFalsePositiveRate(b, bestK)) bestK = k;
      expect(bestK, `b=${b}`).toBe(optKPerBuckets[b - 2]);
      // Asking for exactly the row's best rate must be satisfiable at max b, and not below it.
      expect(() => cassandraBloomSpec(b, bloomFalsePositiveRate(b, bestK))).not.toThrow();
      expectInvalid(() => cassandraBloomSpec(b, bloomFalsePositiveRate(b, bestK) * (1 - 1e-9)));
    }
  });

  it('worked examples from the published table', () => {
    // p = 0.01: row 9's best is 0.0133 > p, row 10's best 0.00819 ≤ p; relax k: k=5 gives
    // 0.00943 ≤ p, k=4 gives 0.0118 > p.
    expect(cassandraBloomSpec(15, 0.01)).toEqual({ bucketsPerElement: 10, hashCount: 5 });
    // p = 0.1 (Cassandra's LCS default): row 5 best 0.0918 ≤ p, row 4 best 0.147 > p; k=2 gives
    // 0.109 > p, so k = 3.
    expect(cassandraBloomSpec(20, 0.1)).toEqual({ bucketsPerElement: 5, hashCount: 3 });
    // p = 0.001: row 15 best 0.000744; row 14 best 0.0012; k = 7 gives 0.001003 > p, so k = 8.
    expect(cassandraBloomSpec(15, 0.001)).toEqual({ bucketsPerElement: 15, hashCount: 8 });
    // Large p: the smallest spec (Cassandra's trivial case, arguments in the intended order).
    expect(cassandraBloomSpec(15, 0.5)).toEqual({ bucketsPerElement: 2, hashCount: 1 });
    expect(cassandraBloomSpec(2, 1)).toEqual({ bucketsPerElement: 2, hashCount: 1 });
  });

  it('returns the smallest b, then the smallest k, that meet p (brute force)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 20 }), fc.double({ min: 1e-5, max: 1, noNaN: true }), (maxB, p) => {
        const rowBest = (b: number): number => {
          let best = 1;
          for (let k = 1; k <= 40; k++) best = Math.min(best, bloomFalsePositiveRate(b, k));
          return best;
        };
        let wantB = -1;
        for (let b = 2; b <= maxB; b++) {
          if (rowBest(b) <= p) {
            wantB = b;
            break;
          }
        }
        if (wantB === -1) {
          expectInvalid(() => cassandraBloomSpec(maxB, p));
          return;
        }
        let wantK = 1;
        while (bloomFalsePositiveRate(wantB, wantK) > p) wantK++;
        expect(cassandraBloomSpec(maxB, p)).toEqual({ bucketsPerElement: wantB, hashCount: wantK });
      }),
    );
  });

  it('rejects bad arguments', () => {
    for (const [b, p] of [
      [1, 0.5],
      [21, 0.01],
      [10.5, 0.01],
      [Number.NaN, 0.01],
      [10, 0],
      [10, -0.1],
      [10, Number.NaN],
      [15, 1e-6], // too small for 15 buckets per element
    ] as const) {
      expectInvalid(() => cassandraBloomSpec(b, p));
    }
  });
});
