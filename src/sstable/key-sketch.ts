/**
 * The distinct-key sketch of a table (properties block, `sievekv.keysketch2`): a HyperLogLog at
 * KEY_SKETCH_PRECISION over the 64-bit `keyHash` (filter/ribbon-format.ts) of each distinct user
 * key — the hash a Ribbon filter's rows start from, so a table builder hashes a key once for the
 * sketch and the whole-table filter. `addHash(lo = keyHash word 0, hi = word 1)`: the register is
 * picked by word 1's top bits.
 *
 * Tables written before it carry `sievekv.key.sketch`, the same HyperLogLog over MurmurHash3
 * x64_128 (the standalone `HyperLogLog`'s hash), 3-4 times as costly per key in JavaScript. The
 * two cannot be merged (different hashes fill different registers): the database merges the old
 * sketches among themselves and adds their count to the new ones' (db/properties.ts), so a key in
 * both an old and a new table counts twice until compaction rewrites the old one.
 *
 * Persisted through every table's sketch: never change the hash, the precision or the word order.
 */
import { HyperLogLog } from '../filter/hyperloglog.js';
import { keyHash } from '../filter/ribbon-format.js';
import { KEY_SKETCH_PRECISION } from './table-properties.js';

const hash = new Int32Array(2);

/** An empty table key sketch. */
export function newKeySketch(): HyperLogLog {
  return new HyperLogLog(KEY_SKETCH_PRECISION);
}

/** Adds the key whose `keyHash` words are (word0, word1). */
export function addKeyHashToSketch(sketch: HyperLogLog, word0: number, word1: number): void {
  sketch.addHash(word0, word1);
}

/** Adds the user key `key[start, end)`. */
export function addKeyToSketch(sketch: HyperLogLog, key: Uint8Array, start: number, end: number): void {
  keyHash(key, start, end, hash, 0);
  sketch.addHash(hash[0]!, hash[1]!);
}
