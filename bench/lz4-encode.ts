/**
 * bench/lz4-encode: LZ4 data blocks compressed by lz4-napi's compressSync (a new Buffer per block,
 * from the allocator bundled in its addon) and by sievekv's compressBlock (native/lz4.c into a
 * reused buffer where sievekv's addon is built, else the WebAssembly compressor,
 * src/sstable/lz4-wasm-encoder.ts, into its own memory), alternated in rounds.
 *
 *   npm run build && node dist/bench/lz4-encode.js
 *
 * The blocks: 2,000 data blocks of ~4 KiB, each db_bench keys and values (half-compressible) laid
 * out by a BlockBuilder as a table would (lz4-blocks.ts). Each round compresses every block 10
 * times with each; prints µs per block and the mean compressed size of each, and the process's
 * RSS at the end (lz4-napi's Buffers are freed only when V8 collects them).
 */
import { readFileSync } from 'node:fs';
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import { compressSync } from 'lz4-napi';
import { compressBlock, CompressionType } from '../src/sstable/compression.js';
import { rawDataBlocks } from './lz4-blocks.js';

const BLOCKS = 2000;
const PASSES = 10;
const raws = rawDataBlocks(BLOCKS);
const buffers = raws.map((r) => Buffer.from(r));
let napiBytes = 0;
let oursBytes = 0;
for (let round = 1; round <= 5; round++) {
  let start = performance.now();
  for (let p = 0; p < PASSES; p++) for (const b of buffers) napiBytes += compressSync(b).length - 4;
  const napi = ((performance.now() - start) * 1000) / (BLOCKS * PASSES);
  start = performance.now();
  for (let p = 0; p < PASSES; p++) for (const r of raws) oursBytes += compressBlock(CompressionType.LZ4, r).length;
  const ours = ((performance.now() - start) * 1000) / (BLOCKS * PASSES);
  console.log(`round ${round}: lz4-napi ${napi.toFixed(2)} µs per block, compressBlock ${ours.toFixed(2)} µs`);
}
const per = (bytes: number): string => (bytes / (5 * PASSES * BLOCKS)).toFixed(0);
const rss = /VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
console.log(`mean compressed size: lz4-napi ${per(napiBytes)} bytes (raw block), compressBlock ${per(oursBytes)} (with its varint header); RSS ${rss === undefined ? '?' : (Number(rss) / 1024).toFixed(0)} MB`);
