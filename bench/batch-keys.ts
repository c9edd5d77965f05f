/**
 * The key orders of bench/batch-fill and bench/batch-fill-leveldb (one module, so both engines
 * write the same keys in the same order): `shuffled` holds 0 … n − 1 once each in a seeded random
 * order (fillrandombatch), `repeats` n seeded draws in [0, n) with repeats (overwritebatch). The
 * generator is xorshift32 from seed 12345, as batch-fill has used from its first run, so its
 * figures stay comparable across sessions.
 */
export function batchKeyOrders(n: number): { shuffled: Uint32Array; repeats: Uint32Array } {
  let state = 12345;
  const random = (): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return state >>> 0;
  };
  const shuffled = new Uint32Array(n);
  for (let i = 0; i < n; i++) shuffled[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = random() % (i + 1);
    [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
  }
  const repeats = new Uint32Array(n);
  for (let i = 0; i < n; i++) repeats[i] = random() % n;
  return { shuffled, repeats };
}
