/**
 * One seed for every randomized test, printed so any failure can be replayed:
 * `SIEVE_SEED=1234 npm test`. The default is fixed, so CI runs are reproducible.
 */
export const DEFAULT_SEED = 0x5eed_2026;

export function testSeed(): number {
  const raw = process.env.SIEVE_SEED;
  if (raw === undefined || raw === '') return DEFAULT_SEED;
  const seed = Number(raw);
  if (!Number.isInteger(seed)) throw new Error(`SIEVE_SEED must be an integer, got ${raw}`);
  return seed | 0;
}

/** mulberry32: a small deterministic PRNG for test data (not for anything persisted). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Random bytes of the given length from `next`. */
export function randomBytes(next: () => number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = (next() * 256) | 0;
  return out;
}
