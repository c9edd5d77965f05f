/**
 * Keys and values for database tests that need flushes and merges: `key(i)` scatters i over the
 * key space (so level-0 tables overlap and merge rather than move), `value(i)` is ~70 bytes, and
 * `putBatch(from, n)` is the batch of puts of keys from..from+n-1.
 */
export const key = (i: number): string => `key-${String(Math.imul(i, 0x9e3779b1) >>> 0).padStart(10, '0')}`;
export const value = (i: number): string => `value-${i}-`.repeat(8);
export const putBatch = (from: number, n: number) =>
  Array.from({ length: n }, (_, j) => ({ type: 'put' as const, key: key(from + j), value: value(from + j) }));
