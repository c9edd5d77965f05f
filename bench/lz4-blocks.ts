/**
 * Data blocks for the LZ4 benches (lz4-decode.ts, lz4-encode.ts): `count` blocks of ~4 KiB, each
 * db_bench keys and values (half-compressible) laid out by a BlockBuilder as a table would,
 * before compression.
 */
import { BlockBuilder } from '../src/sstable/block-builder.js';
import { makeKey, makeValues } from './db/workloads.js';

export function rawDataBlocks(count: number): Uint8Array[] {
  const values = makeValues(11);
  const blocks: Uint8Array[] = [];
  let key = 0;
  for (let b = 0; b < count; b++) {
    const builder = new BlockBuilder(16);
    while (builder.currentSizeEstimate() < 4096) {
      builder.add(makeKey(key), values[key % values.length]!);
      key++;
    }
    blocks.push(builder.finish().slice());
  }
  return blocks;
}
