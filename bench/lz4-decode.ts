/**
 * bench/lz4-decode: LZ4 data blocks decoded by lz4-napi's uncompressSync (a new Buffer per block)
 * and by sievekv's decompressBlock (the WebAssembly decoder, src/sstable/lz4-wasm.ts, into bytes
 * from the byte arena), alternated in rounds.
 *
 *   npm run build && node dist/bench/lz4-decode.js
 *
 * The blocks: 2,000 data blocks of ~4 KiB, each db_bench keys and values (half-compressible) laid
 * out by a BlockBuilder as a table would (lz4-blocks.ts), compressed by compressBlock. Prints µs
 * per block for each decoder and the mean compressed size.
 */
import { uncompressSync } from 'lz4-napi';
import { compressBlock, CompressionType, decompressBlock } from '../src/sstable/compression.js';
import { rawDataBlocks } from './lz4-blocks.js';

const BLOCKS = 2000;
const stored: Uint8Array[] = [];
const framed: Buffer[] = [];
for (const raw of rawDataBlocks(BLOCKS)) {
  const block = compressBlock(CompressionType.LZ4, raw).slice();
  stored.push(block);
  // lz4-napi's own framing: the raw block behind a 4-byte little-endian length.
  const header = raw.length < 128 ? 1 : raw.length < 16384 ? 2 : 3; // the varint of raw.length
  const f = Buffer.alloc(4 + block.length - header);
  f.writeUInt32LE(raw.length);
  f.set(block.subarray(header), 4);
  framed.push(f);
}
const meanSize = stored.reduce((a, s) => a + s.length, 0) / BLOCKS;
console.log(`${BLOCKS} blocks, ${meanSize.toFixed(0)} bytes compressed on average`);
for (let round = 1; round <= 5; round++) {
  let start = performance.now();
  for (const f of framed) uncompressSync(f);
  const napi = ((performance.now() - start) * 1000) / BLOCKS;
  start = performance.now();
  for (const s of stored) decompressBlock(CompressionType.LZ4, s);
  const ours = ((performance.now() - start) * 1000) / BLOCKS;
  console.log(`round ${round}: lz4-napi ${napi.toFixed(2)} µs per block, decompressBlock (WebAssembly) ${ours.toFixed(2)} µs`);
}
