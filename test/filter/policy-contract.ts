/**
 * The contract every FilterPolicy must pass (STYLE.md §12). Not a test file itself: a test file
 * calls `describePolicyContract(...)` at top level, which registers vitest `describe`/`it` blocks.
 *
 * ```ts
 * describePolicyContract('MyPolicy', (bitsPerKey) => new MyPolicy(bitsPerKey), {
 *   theoreticalFpr: (bitsPerKey, n, filter) => ...,   // required
 *   bitsPerKeyRange: [4, 24],                            // optional, see below
 * });
 * ```
 *
 * What it checks (the FilterPolicy / FilterProbe contract in src/filter/policy.ts):
 * - `name`: a non-empty printable-ASCII string (it goes into metaindex keys `filter.<name>`),
 *   the same for every instance and every bits/key (a policy's parameters live in its filters).
 * - No false negatives, ever: fast-check key sets with empty keys, duplicates and binary keys,
 *   at any bits/key in `bitsPerKeyRange`; also larger seeded random sets.
 * - Deterministic: the same keys give the same bytes, from the same or a new instance; the
 *   input keys are not modified.
 * - `keyMayMatch(key, f)` equals `probe.setKey(key); probe.mayMatch(f)`, with one probe reused
 *   across keys and filters; a fresh probe answers for the empty key.
 * - `mayMatch(buf, start, end)` on a filter embedded in a larger buffer equals `mayMatch(filter)`.
 * - Malformed filters (empty, truncated, random bytes) never throw. A truncated filter of a real
 *   key set gives no false negative unless `truncationMayFalseNegative` is set (a policy that
 *   cannot detect truncation must say so in its docs; the filter block keeps filters whole).
 * - Measured false-positive rate on ≥ 100,000 absent keys within a binomial tolerance of the
 *   policy's theory, for each case in `fprCases` (bound justified at `fprTolerance` below).
 *
 * Options (all but `theoreticalFpr` optional):
 * - `theoreticalFpr(bitsPerKey, n, filter)`: the rate theory predicts for `filter`, built by
 *   `make(bitsPerKey)` over n distinct random keys. It may read the filter's own parameters (its
 *   size, a stored k) so that rounding in the policy's sizing does not count as error.
 * - `bitsPerKeyRange: [min, max]` (default [1, 30]): bits/key drawn for the properties.
 * - `fractionalBitsPerKey` (default false): also draw non-integer bits/key.
 * - `maxFilterBytes(bitsPerKey, n)`: if given, every filter's length must be ≤ this.
 * - `fprCases` (default bits/key 4, 10, 16 at n 2,000, 10,000, 20,000), `fprTrials` (absent keys
 *   per case, default and minimum 100,000), `fprRelativeSlack` (default 0.1, see below). Keep n
 *   in the thousands: a filter over ~100 keys has a rate of its own that strays from theory by
 *   more than the slack (Bloom at 10 bits/key over 20 seeds: worst |measured − theory| was 1.3×
 *   the tolerance at n = 100, 0.6× at n = 10,000), a fact about small filters, not a defect.
 * - `truncationMayFalseNegative` (default false): see above.
 * - `maxKeys` (default 200) and `numRuns` (default 100): size and count of the fast-check runs.
 *
 * Randomness: fast-check (seeded globally in test/support/setup.ts) and `rng(testSeed())`, so a
 * failure replays with its printed `SIEVE_SEED`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FilterPolicy } from '../../src/filter/policy.js';
import { randomBytes, rng, testSeed } from '../support/seed.js';

export interface FprCase {
  readonly bitsPerKey: number;
  /** Number of distinct keys the filter is built over. */
  readonly n: number;
}

export interface PolicyContractOptions {
  theoreticalFpr(bitsPerKey: number, n: number, filter: Uint8Array): number;
  bitsPerKeyRange?: readonly [number, number];
  fractionalBitsPerKey?: boolean;
  maxFilterBytes?(bitsPerKey: number, n: number): number;
  fprCases?: readonly FprCase[];
  fprTrials?: number;
  fprRelativeSlack?: number;
  truncationMayFalseNegative?: boolean;
  maxKeys?: number;
  numRuns?: number;
}

const MIN_FPR_TRIALS = 100_000;
const DEFAULT_FPR_CASES: readonly FprCase[] = [
  { bitsPerKey: 4, n: 2_000 },
  { bitsPerKey: 10, n: 10_000 },
  { bitsPerKey: 16, n: 20_000 },
];

/**
 * How far a measured rate may sit from theory p over N absent keys.
 *
 * Given one filter, each absent random key is a Bernoulli trial with that filter's own rate q,
 * so the count of false positives is Binomial(N, q), with standard deviation sqrt(q(1−q)/N) on
 * the rate. Four standard deviations (two-sided) is exceeded with probability ≈ 6·10⁻⁵ under the
 * normal approximation, so a correct policy passes for essentially every seed.
 *
 * The relative slack covers q ≠ p: a filter's rate depends on how its bits happened to fill
 * (for a 10-bit/key Bloom filter over 10,000 keys the relative sd of q is ≈ 2%), and theory is
 * an approximation (Bloom's formula ignores double hashing's correlations and hash flaws; for
 * other policies it is similarly a model). A default of 10% of p covers several such sd while
 * still catching real defects, which move the rate by factors (a lost probe, a wrong modulus).
 * An absolute 1/N covers the granularity of the count when p·N is tiny.
 */
export function fprTolerance(p: number, trials: number, relativeSlack: number): number {
  return 4 * Math.sqrt((p * (1 - p)) / trials) + relativeSlack * p + 1 / trials;
}

/** Printable ASCII without spaces: safe inside a metaindex key and in logs. */
const NAME_PATTERN = /^[\x21-\x7e]+$/;

const keyArb = fc.oneof(
  { arbitrary: fc.constant(new Uint8Array(0)), weight: 1 },
  { arbitrary: fc.uint8Array({ minLength: 1, maxLength: 4 }), weight: 3 },
  { arbitrary: fc.uint8Array({ minLength: 5, maxLength: 64 }), weight: 6 },
);

/** Key sets with duplicates spliced in (as the same bytes and as copies). */
function keySetArb(maxKeys: number): fc.Arbitrary<Uint8Array[]> {
  return fc
    .tuple(fc.array(keyArb, { maxLength: maxKeys }), fc.array(fc.nat(), { maxLength: 8 }))
    .map(([keys, dups]) => {
      const out = keys.slice();
      if (keys.length > 0) {
        for (const d of dups) {
          const k = keys[d % keys.length]!;
          out.splice(d % (out.length + 1), 0, d % 2 === 0 ? k : k.slice());
        }
      }
      return out;
    });
}

function mustNotThrow(what: string, fn: () => boolean): boolean {
  let result: unknown;
  try {
    result = fn();
  } catch (err) {
    expect.fail(`${what} threw: ${String(err)}`);
  }
  expect(typeof result, what).toBe('boolean');
  return result as boolean;
}

export function describePolicyContract(
  name: string,
  make: (bitsPerKey: number) => FilterPolicy,
  opts: PolicyContractOptions,
): void {
  const [minBits, maxBits] = opts.bitsPerKeyRange ?? [1, 30];
  const maxKeys = opts.maxKeys ?? 200;
  const numRuns = opts.numRuns ?? 100;
  const fprTrials = Math.max(MIN_FPR_TRIALS, opts.fprTrials ?? MIN_FPR_TRIALS);
  const fprSlack = opts.fprRelativeSlack ?? 0.1;
  const fprCases = opts.fprCases ?? DEFAULT_FPR_CASES;

  const bitsArb: fc.Arbitrary<number> = opts.fractionalBitsPerKey
    ? fc.oneof(
        fc.integer({ min: Math.ceil(minBits), max: Math.floor(maxBits) }),
        fc.double({ min: minBits, max: maxBits, noNaN: true }),
      )
    : fc.integer({ min: Math.ceil(minBits), max: Math.floor(maxBits) });

  const checkSize = (bitsPerKey: number, n: number, filter: Uint8Array): void => {
    if (opts.maxFilterBytes === undefined) return;
    expect(filter.length, `bits/key ${bitsPerKey}, n ${n}`).toBeLessThanOrEqual(opts.maxFilterBytes(bitsPerKey, n));
  };

  describe(`FilterPolicy contract: ${name}`, () => {
    it('has a stable, non-empty, printable name, the same at every bits/key', () => {
      const first = make(minBits).name;
      expect(typeof first).toBe('string');
      expect(first).toMatch(NAME_PATTERN);
      const policy = make(maxBits);
      expect(policy.name).toBe(first);
      expect(policy.name).toBe(policy.name);
      for (let b = Math.ceil(minBits); b <= maxBits; b += Math.max(1, Math.floor((maxBits - minBits) / 5))) {
        expect(make(b).name).toBe(first);
      }
    });

    it('has no false negatives for any key set (empty, duplicate and binary keys)', () => {
      fc.assert(
        fc.property(bitsArb, keySetArb(maxKeys), (bitsPerKey, keys) => {
          const policy = make(bitsPerKey);
          const filter = policy.createFilter(keys);
          checkSize(bitsPerKey, keys.length, filter);
          const probe = policy.newProbe();
          for (const key of keys) {
            expect(policy.keyMayMatch(key, filter)).toBe(true);
            probe.setKey(key);
            expect(probe.mayMatch(filter)).toBe(true);
          }
        }),
        { numRuns },
      );
    });

    it('has no false negatives on larger random key sets across bits/key', () => {
      const next = rng(testSeed() ^ 0x1a2b3c);
      const step = Math.max(1, Math.floor((maxBits - minBits) / 6));
      for (let b = Math.ceil(minBits); b <= maxBits; b += step) {
        const policy = make(b);
        const n = 1000 + Math.floor(next() * 4000);
        const keys = Array.from({ length: n }, () => randomBytes(next, 1 + Math.floor(next() * 24)));
        const filter = policy.createFilter(keys);
        checkSize(b, n, filter);
        const probe = policy.newProbe();
        for (let i = 0; i < n; i++) {
          probe.setKey(keys[i]!);
          if (!probe.mayMatch(filter)) expect.fail(`false negative: bits/key ${b}, n ${n}, key #${i}`);
        }
      }
    });

    it('builds deterministically and leaves the input keys untouched', () => {
      fc.assert(
        fc.property(bitsArb, keySetArb(maxKeys), (bitsPerKey, keys) => {
          const before = keys.map((k) => k.slice());
          const policy = make(bitsPerKey);
          const a = policy.createFilter(keys);
          const b = policy.createFilter(keys);
          const c = make(bitsPerKey).createFilter(keys);
          expect(b).toEqual(a);
          expect(c).toEqual(a);
          expect(b).not.toBe(a); // owned buffers
          expect(keys).toEqual(before);
        }),
        { numRuns },
      );
    });

    it('keyMayMatch equals probe.setKey + mayMatch, with one probe reused throughout', () => {
      const policy = make(Math.max(minBits, Math.min(maxBits, 10)));
      const probe = policy.newProbe();
      fc.assert(
        fc.property(keySetArb(maxKeys), fc.array(keyArb, { maxLength: 50 }), (keys, others) => {
          const filter = policy.createFilter(keys);
          for (const q of [...others, ...keys.slice(0, 20)]) {
            probe.setKey(q);
            expect(probe.mayMatch(filter)).toBe(policy.keyMayMatch(q, filter));
          }
        }),
        { numRuns },
      );
    });

    it('a fresh probe answers for the empty key', () => {
      fc.assert(
        fc.property(bitsArb, keySetArb(maxKeys), (bitsPerKey, keys) => {
          const policy = make(bitsPerKey);
          const filter = policy.createFilter(keys);
          expect(policy.newProbe().mayMatch(filter)).toBe(policy.keyMayMatch(new Uint8Array(0), filter));
        }),
        { numRuns: Math.ceil(numRuns / 4) },
      );
    });

    it('mayMatch on a sub-range of a larger buffer equals mayMatch on the copied filter', () => {
      fc.assert(
        fc.property(
          bitsArb,
          keySetArb(maxKeys),
          fc.array(keyArb, { maxLength: 30 }),
          fc.uint8Array({ maxLength: 40 }),
          fc.uint8Array({ maxLength: 40 }),
          (bitsPerKey, keys, others, prefix, suffix) => {
            const policy = make(bitsPerKey);
            const filter = policy.createFilter(keys);
            const buf = new Uint8Array(prefix.length + filter.length + suffix.length);
            buf.set(prefix, 0);
            buf.set(filter, prefix.length);
            buf.set(suffix, prefix.length + filter.length);
            const probe = policy.newProbe();
            for (const q of [...keys.slice(0, 20), ...others]) {
              probe.setKey(q);
              const whole = probe.mayMatch(filter);
              expect(probe.mayMatch(buf, prefix.length, prefix.length + filter.length)).toBe(whole);
              expect(probe.mayMatch(filter, 0, filter.length)).toBe(whole);
            }
          },
        ),
        { numRuns },
      );
    });

    it('never throws on malformed filters: empty, truncated, random bytes', () => {
      fc.assert(
        fc.property(
          bitsArb,
          keySetArb(maxKeys),
          fc.uint8Array({ maxLength: 200 }),
          fc.array(keyArb, { minLength: 1, maxLength: 10 }),
          (bitsPerKey, keys, junk, queries) => {
            const policy = make(bitsPerKey);
            const probe = policy.newProbe();
            const filter = policy.createFilter(keys);
            const cuts = new Set([0, 1, 2, filter.length >> 1, filter.length - 2, filter.length - 1]);
            for (const q of [...queries, ...keys.slice(0, 10)]) {
              probe.setKey(q);
              mustNotThrow('empty filter', () => policy.keyMayMatch(q, new Uint8Array(0)));
              mustNotThrow('random bytes', () => policy.keyMayMatch(q, junk));
              mustNotThrow('random bytes (probe)', () => probe.mayMatch(junk));
              for (let at = 0; at <= junk.length; at += 17) {
                mustNotThrow('random sub-range', () => probe.mayMatch(junk, at >> 1, at));
              }
              for (const cut of cuts) {
                if (cut < 0 || cut >= filter.length) continue;
                const truncated = filter.subarray(0, cut);
                mustNotThrow(`truncated to ${cut}`, () => policy.keyMayMatch(q, truncated));
                mustNotThrow(`truncated to ${cut} (range)`, () => probe.mayMatch(filter, 0, cut));
              }
            }
            if (!opts.truncationMayFalseNegative) {
              for (const key of keys) {
                for (const cut of cuts) {
                  if (cut < 0 || cut >= filter.length) continue;
                  expect(policy.keyMayMatch(key, filter.subarray(0, cut)), `truncated to ${cut}`).toBe(true);
                }
              }
            }
          },
        ),
        { numRuns },
      );
    });

    for (const { bitsPerKey, n } of fprCases) {
      it(`false-positive rate at ${bitsPerKey} bits/key over ${n} keys is within tolerance of theory`, () => {
        const next = rng(testSeed() ^ Math.imul(bitsPerKey * 1000 + 7, 0x9e3779b1) ^ n);
        const policy = make(bitsPerKey);
        // Present keys are 16 bytes, absent keys 20: absent by construction.
        const keys = Array.from({ length: n }, () => randomBytes(next, 16));
        const filter = policy.createFilter(keys);
        checkSize(bitsPerKey, n, filter);
        const probe = policy.newProbe();
        const absent = new Uint8Array(20); // reused: policies must not retain key bytes
        let falsePositives = 0;
        for (let i = 0; i < fprTrials; i++) {
          for (let j = 0; j < absent.length; j++) absent[j] = (next() * 256) | 0;
          probe.setKey(absent);
          if (probe.mayMatch(filter)) falsePositives++;
        }
        const measured = falsePositives / fprTrials;
        const p = opts.theoreticalFpr(bitsPerKey, n, filter);
        expect(p).toBeGreaterThan(0);
        expect(p).toBeLessThanOrEqual(1);
        const tolerance = fprTolerance(p, fprTrials, fprSlack);
        expect(
          Math.abs(measured - p),
          `measured ${measured} vs theory ${p} (tolerance ${tolerance}, ${fprTrials} absent keys)`,
        ).toBeLessThanOrEqual(tolerance);
      });
    }
  });
}
