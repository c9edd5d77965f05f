/**
 * bench/block-seek: a point lookup's seek in a data block, by the block iterator (JavaScript) and
 * by the WebAssembly seek (block-seek-wasm.ts, through lookup-seek.ts), alternated on the same
 * blocks and targets.
 *
 *   npm run build && node dist/bench/block-seek.js
 *
 * The blocks: 1,000 data blocks of ~4 KiB as a table lays them out (restart interval 16), of
 * db_bench keys (consecutive numbers, as a merged table holds them) as internal keys, and db_bench
 * values. Each round takes the blocks in a shuffled order, puts each where a point lookup's block
 * lies (untimed), and times the seeks of all its keys at the highest sequence, in a shuffled order,
 * by each method (one clock reading per block and method). Prints µs per seek; the first round
 * warms up.
 */
import { encodeInternalKey, MAX_SEQUENCE, ValueType } from '../src/format/internal-key.js';
import { bytewiseInternalComparator } from '../src/format/internal-key-comparator.js';
import { Block, BlockIterator } from '../src/sstable/block.js';
import { BlockBuilder } from '../src/sstable/block-builder.js';
import { lookupFound, SEEK_FOUND, seekLookupBlock } from '../src/sstable/lookup-seek.js';
import { LOOKUP_OUTPUT_START, lz4WasmDecoder } from '../src/sstable/lz4-wasm.js';
import { makeKey, makeValues } from './db/workloads.js';
import { SeededRandom } from './seeded-keys.js';

const BLOCKS = 1000;
const ROUNDS = 4;
const wasm = lz4WasmDecoder();
if (wasm === undefined) throw new Error('this Node has no WebAssembly');

const random = new SeededRandom(1);
function shuffle<T>(items: T[]): void {
  for (let i = items.length - 1; i > 0; i--) {
    const j = random.nextUint32() % (i + 1);
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
}

const values = makeValues(11);
const blocks: { bytes: Uint8Array; targets: Uint8Array[] }[] = [];
let next = 0;
for (let b = 0; b < BLOCKS; b++) {
  const builder = new BlockBuilder(16);
  const targets: Uint8Array[] = [];
  while (builder.currentSizeEstimate() < 4096) {
    builder.add(encodeInternalKey(makeKey(next), next + 1, ValueType.VALUE), values[next % values.length]!);
    targets.push(encodeInternalKey(makeKey(next), MAX_SEQUENCE, ValueType.VALUE));
    next++;
  }
  shuffle(targets);
  blocks.push({ bytes: builder.finish().slice(), targets });
}

const iterator = new BlockIterator(bytewiseInternalComparator, new Block(blocks[0]!.bytes));
let lookupBlock: Block | null = null;
for (let round = 0; round < ROUNDS; round++) {
  shuffle(blocks);
  let inJs = 0;
  let inWasm = 0;
  let sum = 0;
  for (const { bytes, targets } of blocks) {
    wasm.bytes.set(bytes, LOOKUP_OUTPUT_START);
    lookupBlock = Block.reuse(lookupBlock, wasm.output, bytes.length, 'bench', 0);
    iterator.setBlock(lookupBlock);
    let start = performance.now();
    for (const key of targets) {
      iterator.seek(key);
      sum += iterator.valueStart;
    }
    inJs += performance.now() - start;
    start = performance.now();
    for (const key of targets) if (seekLookupBlock(wasm.output, bytes.length, key) === SEEK_FOUND) sum -= lookupFound.valueStart;
    inWasm += performance.now() - start;
  }
  if (sum !== 0) throw new Error('the two seeks found different entries');
  const us = (ms: number): string => ((ms * 1000) / next).toFixed(3);
  console.log(`round ${round + 1}${round === 0 ? ' (warm-up)' : ''}: block iterator ${us(inJs)} µs per seek, WebAssembly ${us(inWasm)} (${next} seeks)`);
}
