/**
 * bench/bloom-build: the cost of writing LevelDB Bloom filters of the size a table's filter block
 * holds — 33 keys per filter (a 4 KiB block of db_bench entries per 2 KiB filter range), 10
 * bits/key, k = 6 — from the keys' hashes, as FilterBlockBuilder does. ns per key, three rounds
 * of 100,000 filters (the first warms up). For a before/after comparison run it in two checkouts.
 *
 *   npm run build && node dist/bench/bloom-build.js
 */
import { BloomFilterPolicy } from '../src/filter/bloom.js';

const policy = new BloomFilterPolicy(10);
const n = 33;
const hashes = new Uint32Array(n);
let s = 1;
for (let i = 0; i < n; i++) {
  s = (Math.imul(s, 1103515245) + 12345) >>> 0;
  hashes[i] = s;
}
const length = policy.filterLength(n);
const dst = new Uint8Array(length);
for (let round = 0; round < 3; round++) {
  const start = performance.now();
  for (let f = 0; f < 100_000; f++) {
    dst.fill(0);
    policy.writeFilter(hashes, n, dst, 0);
  }
  console.log(`round ${round}: ${(((performance.now() - start) * 1e6) / 100_000 / n).toFixed(1)} ns per key`);
}
