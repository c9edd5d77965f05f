/**
 * Bloom filter sizing rules from the field: how LevelDB, Guava and Cassandra turn "bits per key"
 * or "a target false-positive rate" into a filter size and a number of probes (hash functions).
 *
 * Pure functions, no state, safe to call from anywhere. Each reproduces the named project's rule
 * (read from its source, re-implemented here) and says so in its doc comment; where we deviate
 * from the original, the comment says where and why. Bad input (NaN, out-of-range, non-integer
 * where the original takes an integer) throws `SieveError` INVALID_ARGUMENT.
 *
 * Notation: n = number of keys, m = number of bits, k = number of probes, b = m/n bits per key
 * (Cassandra: "buckets per element"), p = false-positive rate.
 */
import { invalidArgument } from '../errors.js';

/** LevelDB never uses more than 30 probes; a stored k above it is "reserved for new encodings". */
export const MAX_BLOOM_HASH_COUNT = 30;

/**
 * The probe count LevelDB's `BloomFilterPolicy` uses for `bitsPerKey` (util/bloom.cc; DezhouKV
 * uses the same rule): k = floor(bitsPerKey · 0.69) clamped to 1..30. LevelDB rounds down on
 * purpose ("to reduce probing cost a little bit"); 0.69 ≈ ln 2 is the optimum for large filters.
 * The product is computed in doubles exactly as LevelDB's `static_cast<size_t>(bits * 0.69)`, so
 * e.g. 10 bits/key gives 10 · 0.69 = 6.8999… → 6, as LevelDB does.
 *
 * @param bitsPerKey finite and ≥ 0 (fractional allowed; LevelDB itself takes an int)
 */
export function bloomHashCount(bitsPerKey: number): number {
  if (!Number.isFinite(bitsPerKey) || bitsPerKey < 0) {
    throw invalidArgument(`bitsPerKey must be a finite number >= 0, got ${bitsPerKey}`);
  }
  const k = Math.floor(bitsPerKey * 0.69);
  return k < 1 ? 1 : k > MAX_BLOOM_HASH_COUNT ? MAX_BLOOM_HASH_COUNT : k;
}

/**
 * Guava's `BloomFilter.optimalNumOfBits(n, p)`: m = (long) (−n · ln p / (ln 2)²), truncated
 * toward zero like Java's cast. As in Guava, p = 0 is replaced by `Double.MIN_VALUE` (the
 * smallest positive double, `Number.MIN_VALUE` here: 5e-324), giving about 1,550 bits per key.
 *
 * @param n expected insertions: a non-negative safe integer
 * @param p target false-positive rate, 0 ≤ p < 1
 */
export function optimalNumOfBits(n: number, p: number): number {
  if (!Number.isSafeInteger(n) || n < 0) {
    throw invalidArgument(`n must be a non-negative integer, got ${n}`);
  }
  if (!(p >= 0 && p < 1)) throw invalidArgument(`p must be in [0, 1), got ${p}`);
  const q = p === 0 ? Number.MIN_VALUE : p;
  // Same operation order as Guava: (−n · ln p) / (ln 2 · ln 2). The + 0 turns −0 (n = 0) into 0.
  return Math.trunc((-n * Math.log(q)) / (Math.log(2) * Math.log(2))) + 0;
}

/**
 * Guava's `BloomFilter.optimalNumOfHashFunctions(n, m)`: k = max(1, round(m / n · ln 2)), with
 * Java's `Math.round` (ties toward +∞, as JavaScript's `Math.round` for positive values).
 * Guava computes `(double) m / n` first to avoid integer truncation; so do we (all doubles here).
 *
 * @param n expected insertions: a positive safe integer (Guava's callers replace 0 with 1)
 * @param m number of bits: a non-negative safe integer
 */
export function optimalNumOfHashFunctions(n: number, m: number): number {
  if (!Number.isSafeInteger(n) || n < 1) throw invalidArgument(`n must be a positive integer, got ${n}`);
  if (!Number.isSafeInteger(m) || m < 0) throw invalidArgument(`m must be a non-negative integer, got ${m}`);
  return Math.max(1, Math.round((m / n) * Math.log(2)));
}

/**
 * Bits per key for a target false-positive rate: Guava's formula per key, −ln p / (ln 2)², without
 * its truncation to whole bits (a policy rounds the filter size itself). At the optimal (real) k
 * this gives exactly p in theory; with an integer k it gives a rate within a few percent of p.
 *
 * @param p target false-positive rate, 0 < p < 1
 */
export function bitsPerKeyForFalsePositiveRate(p: number): number {
  if (!(p > 0 && p < 1)) throw invalidArgument(`false-positive rate must be in (0, 1), got ${p}`);
  return -Math.log(p) / (Math.log(2) * Math.log(2));
}

/**
 * The textbook false-positive rate of a Bloom filter with `bitsPerKey` bits per key and `k`
 * probes: (1 − e^(−k/b))^k (Bloom 1970; Fan, Cao et al., "Summary Cache", whose table Cassandra
 * ships). For a concrete filter of m bits over n keys pass b = m / n. An approximation: it
 * assumes independent, uniform probes and ignores the small excess of real filters.
 *
 * @param bitsPerKey b > 0, finite
 * @param k probes: an integer ≥ 0 (k = 0 means "always matches": rate 1)
 */
export function bloomFalsePositiveRate(bitsPerKey: number, k: number): number {
  if (!Number.isFinite(bitsPerKey) || bitsPerKey <= 0) {
    throw invalidArgument(`bitsPerKey must be a finite number > 0, got ${bitsPerKey}`);
  }
  if (!Number.isSafeInteger(k) || k < 0) throw invalidArgument(`k must be a non-negative integer, got ${k}`);
  return Math.pow(1 - Math.exp(-k / bitsPerKey), k);
}

/** A filter shape chosen by {@link cassandraBloomSpec}. */
export interface BloomSpec {
  /** b: bits ("buckets") per element. */
  readonly bucketsPerElement: number;
  /** k: number of hash functions (probes). */
  readonly hashCount: number;
}

/** Cassandra's table covers 2..20 buckets per element (rows 0 and 1 are dummies). */
const CASSANDRA_MIN_BUCKETS = 2;
const CASSANDRA_MAX_BUCKETS = 20;

/** The k in 1.. that minimises (1 − e^(−k/b))^k; the first (smallest) on a tie, like Cassandra. */
function optimalHashCountForBuckets(b: number): number {
  let best = 1;
  let bestRate = bloomFalsePositiveRate(b, 1);
  // The rate is unimodal in k with its minimum near b · ln 2 < b, so scanning to b + 1 suffices.
  for (let k = 2; k <= b + 1; k++) {
    const rate = bloomFalsePositiveRate(b, k);
    if (rate < bestRate) {
      best = k;
      bestRate = rate;
    }
  }
  return best;
}

/**
 * Cassandra's `BloomCalculations.computeBloomSpec(maxBucketsPerElement, maxFalsePosProb)`:
 * the smallest buckets-per-element b (from 2 up to `maxBucketsPerElement`) whose optimal k gives
 * a rate (1 − e^(−k/b))^k ≤ p, then the smallest k that still meets p at that b. Bandwidth (bits)
 * is preferred over CPU (probes), as Cassandra's comment says.
 *
 * Cassandra reads the rates from a 3-digit table (Fan, Cao et al.); we compute them from the
 * formula, which agrees with every published entry to its printed precision (tested), and the
 * optimal k per row agrees with Cassandra's `optKPerBuckets`. Deviations, both at the edges:
 * - For p ≥ rate(2, 1) ≈ 0.393 Cassandra returns `new BloomSpecification(2, optKPerBuckets[2])`,
 *   whose arguments are (K, buckets), i.e. 1 bucket and 2 probes (rate ≈ 0.75, above p). We
 *   return what its comment intends and its general rule gives: 2 buckets, 1 probe.
 * - Cassandra throws when p is below the *last printed* entry of row `maxBucketsPerElement`,
 *   which for a few rows is slightly above the row's minimum; we throw when p is below the row's
 *   minimum, i.e. exactly when no k satisfies p.
 *
 * @param maxBucketsPerElement integer 2..20 (Cassandra's table size; Cassandra passes
 *   `min(20, …)`, older descriptions of the rule say 15)
 * @param maxFalsePosProb target rate p, 0 < p (p ≥ 1 gives the smallest spec)
 * @throws SieveError INVALID_ARGUMENT if p cannot be met with `maxBucketsPerElement` buckets
 *   (Cassandra: UnsupportedOperationException) or an argument is out of range
 */
export function cassandraBloomSpec(maxBucketsPerElement: number, maxFalsePosProb: number): BloomSpec {
  if (
    !Number.isInteger(maxBucketsPerElement) ||
    maxBucketsPerElement < CASSANDRA_MIN_BUCKETS ||
    maxBucketsPerElement > CASSANDRA_MAX_BUCKETS
  ) {
    throw invalidArgument(
      `maxBucketsPerElement must be an integer in ${CASSANDRA_MIN_BUCKETS}..${CASSANDRA_MAX_BUCKETS}, got ${maxBucketsPerElement}`,
    );
  }
  const p = maxFalsePosProb;
  if (!(p > 0)) throw invalidArgument(`maxFalsePosProb must be > 0, got ${p}`);
  const maxB = maxBucketsPerElement;
  if (p < bloomFalsePositiveRate(maxB, optimalHashCountForBuckets(maxB))) {
    throw invalidArgument(`Unable to satisfy ${p} with ${maxB} buckets per element`);
  }
  // First the minimal number of buckets (terminates by the check above) ...
  let b = CASSANDRA_MIN_BUCKETS;
  let k = optimalHashCountForBuckets(b);
  while (bloomFalsePositiveRate(b, k) > p) {
    b++;
    k = optimalHashCountForBuckets(b);
  }
  // ... then relax k while the rate still meets p.
  while (k > 1 && bloomFalsePositiveRate(b, k - 1) <= p) k--;
  return { bucketsPerElement: b, hashCount: k };
}
