/**
 * Deterministic workload keys for benchmarks and measurement scripts (bench/filters.ts,
 * scripts/fpr-report.ts): the same seed gives the same keys on every machine and run, so a
 * reported figure can be reproduced exactly. Not for anything persisted and not for tests (tests
 * draw randomness from fast-check or test/support/seed.ts, which print their seed).
 *
 * The generator is mulberry32 (Tommy Ettinger's 32-bit-state PRNG): fast, statistically adequate
 * for workload data, and trivially portable. Keys are filled four bytes per draw.
 */

/** A seeded stream of uniform 32-bit words (mulberry32). */
export class SeededRandom {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** The next word, uniform in 0 .. 2^32 − 1. */
  nextUint32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** Overwrites `out[start, end)` with random bytes. Allocates nothing. */
  fill(out: Uint8Array, start = 0, end = out.length): void {
    let i = start;
    for (; i + 4 <= end; i += 4) {
      const w = this.nextUint32();
      out[i] = w;
      out[i + 1] = w >>> 8;
      out[i + 2] = w >>> 16;
      out[i + 3] = w >>> 24;
    }
    if (i < end) {
      let w = this.nextUint32();
      for (; i < end; i++, w >>>= 8) out[i] = w;
    }
  }
}

/**
 * `count` random keys of `length` bytes each, from `seed`. The keys are views into one shared
 * buffer (one allocation for the bytes, one small object per key); callers must not write them.
 */
export function randomKeys(count: number, length: number, seed: number): Uint8Array[] {
  const bytes = new Uint8Array(count * length);
  new SeededRandom(seed).fill(bytes);
  const keys = new Array<Uint8Array>(count);
  for (let i = 0; i < count; i++) keys[i] = bytes.subarray(i * length, (i + 1) * length);
  return keys;
}
