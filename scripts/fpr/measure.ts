/**
 * Measures a filter policy's false-positive rate at one bits/key setting, deterministically, for
 * `npm run fpr-report` (scripts/fpr-report.ts) and its test.
 *
 * Method: `filters` filters, each over `keysPerFilter` random 16-byte keys; then random 20-byte
 * keys (absent by construction: no present key has that length) are probed round-robin across the
 * filters, hash-once (`setKey` + `mayMatch`), until the budget's stopping rule holds. The measured
 * rate is false positives / trials; the theory is the mean of `policy.theory` over the filters
 * (probes are spread evenly, so both estimate the same mean). Everything derives from `seed`: the
 * same arguments give the same numbers on every run and machine.
 */
import type { PolicyUnderTest } from '../../bench/filter-policies.js';
import { SeededRandom } from '../../bench/seeded-keys.js';

/** Length of present keys; absent keys are longer, so never equal to a present key. */
export const PRESENT_KEY_BYTES = 16;
export const ABSENT_KEY_BYTES = 20;

/** Which filters: how many, over how many keys each. */
export interface FprScope {
  readonly keysPerFilter: number;
  readonly filters: number;
}

/**
 * When to stop probing: never before `minTrials`; then as soon as `targetFalsePositives` were
 * seen (enough for a relative standard error of about 1/√target) or `maxTrials` were made.
 * The rule is checked every `filters`-multiple of trials, so each filter gets the same share.
 */
export interface FprBudget {
  readonly minTrials: number;
  readonly maxTrials: number;
  readonly targetFalsePositives: number;
}

export interface FprPoint {
  /** The budget asked of the policy. */
  readonly bitsPerKey: number;
  /** Filter bytes · 8 / keys, over all filters: what the policy actually spent, headers included. */
  readonly usedBitsPerKey: number;
  readonly trials: number;
  readonly falsePositives: number;
  /** falsePositives / trials. */
  readonly measured: number;
  /** Mean theoretical rate of the filters. */
  readonly theory: number;
}

/** Trials between checks of the stopping rule (rounded up to whole rounds over the filters). */
const CHECK_EVERY = 10_000;

export function measureFpr(
  policy: PolicyUnderTest,
  bitsPerKey: number,
  scope: FprScope,
  budget: FprBudget,
  seed: number,
): FprPoint {
  const { keysPerFilter: n, filters: count } = scope;
  if (!(Number.isInteger(n) && n >= 1 && Number.isInteger(count) && count >= 1)) {
    throw new RangeError(`bad scope: ${JSON.stringify(scope)}`);
  }
  const rand = new SeededRandom(seed);
  const instance = policy.make(bitsPerKey);
  const built: Uint8Array[] = [];
  const keyBytes = new Uint8Array(n * PRESENT_KEY_BYTES);
  const keys = Array.from({ length: n }, (_, i) => keyBytes.subarray(i * PRESENT_KEY_BYTES, (i + 1) * PRESENT_KEY_BYTES));
  let totalBytes = 0;
  let theorySum = 0;
  for (let f = 0; f < count; f++) {
    rand.fill(keyBytes); // the views in `keys` see the new bytes; filters keep no key references
    const filter = instance.createFilter(keys);
    built.push(filter);
    totalBytes += filter.length;
    theorySum += policy.theory(filter, n);
  }

  const probe = instance.newProbe();
  const absent = new Uint8Array(ABSENT_KEY_BYTES);
  const chunk = Math.ceil(CHECK_EVERY / count) * count;
  let trials = 0;
  let falsePositives = 0;
  for (;;) {
    for (let i = 0; i < chunk; i++) {
      rand.fill(absent);
      probe.setKey(absent);
      if (probe.mayMatch(built[i % count]!)) falsePositives++;
    }
    trials += chunk;
    if (trials >= budget.minTrials && (falsePositives >= budget.targetFalsePositives || trials >= budget.maxTrials)) {
      break;
    }
  }
  return {
    bitsPerKey,
    usedBitsPerKey: (totalBytes * 8) / (n * count),
    trials,
    falsePositives,
    measured: falsePositives / trials,
    theory: theorySum / count,
  };
}
