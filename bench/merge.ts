/**
 * bench/merge: the CPU a compaction's merge spends per input entry, alone on one thread — the
 * before/after figure for a change to the merge loop, the table builder or the filters (run it
 * in a checkout of each commit, alternated).
 *
 *   npm run build && node dist/bench/merge.js
 *
 * Setup: four level-0 tables of 35,000 seeded random db_bench keys each (`%016d` of a number below
 * 1,000,000; 100-byte half-compressible values) and five level-1 tables holding 140,000 more, the
 * default table options (lz4, Bloom block filter, Ribbon table filter, 4 KiB blocks), in a temporary
 * directory. Each round merges them all into level 1 (2 MiB outputs), as a worker does: the merge's
 * steps with a turn of the event loop between them (compaction/job-steps.ts). Prints, per round,
 * CPU and wall time per input entry (about 268,000 of them); the first rounds warm the JIT up.
 */
import { mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compactionSteps } from '../src/compaction/compaction.js';
import { runStepsYielding } from '../src/compaction/job-steps.js';
import { BloomFilterPolicy } from '../src/filter/bloom.js';
import { RibbonFilterPolicy } from '../src/filter/ribbon.js';
import { encodeInternalKey, ValueType } from '../src/format/internal-key.js';
import { NodeFileSystem } from '../src/fs/node-fs.js';
import { CompressionType } from '../src/sstable/compression.js';
import { TableBuilder } from '../src/sstable/table-builder.js';
import { tableFileName } from '../src/version/filenames.js';
import type { FileMetaData } from '../src/version/version-edit.js';
import { makeKey, makeValues } from './db/workloads.js';
import { SeededRandom } from './seeded-keys.js';

const ROUNDS = 7;
const fs = new NodeFileSystem();
const dir = mkdtempSync(join(tmpdir(), 'sievekv-merge-'));
const values = makeValues(7);
const random = new SeededRandom(5);
const tableOptions = {
  compression: CompressionType.LZ4,
  filterPolicy: new BloomFilterPolicy(10),
  tableFilterPolicy: new RibbonFilterPolicy(10),
  filterScope: 'both' as const,
};
let sequence = 1;

function writeTable(number: number, keys: number[]): FileMetaData {
  keys.sort((a, b) => a - b);
  const file = fs.createWritable(tableFileName(dir, number));
  const builder = new TableBuilder(file, tableOptions);
  let previous = -1;
  for (const k of keys) {
    if (k === previous) continue;
    previous = k;
    builder.add(encodeInternalKey(makeKey(k), sequence++, ValueType.VALUE), values[k % values.length]!);
  }
  builder.finish();
  file.sync();
  file.close();
  return { number, fileSize: builder.fileSize, smallest: builder.smallestKey!, largest: builder.largestKey! };
}

const randomKeys = (n: number): number[] => Array.from({ length: n }, () => random.nextUint32() % 1_000_000);
const upper = [1, 2, 3, 4].map((n) => writeTable(n, randomKeys(35_000)));
const lowerKeys = randomKeys(140_000).sort((a, b) => a - b);
const lower = [0, 1, 2, 3, 4].map((i) => writeTable(10 + i, lowerKeys.slice(i * 28_000, (i + 1) * 28_000)));

let nextNumber = 100;
try {
  for (let round = 0; round < ROUNDS; round++) {
    const outputNumbers = Array.from({ length: 30 }, () => nextNumber++);
    const cpu = process.cpuUsage();
    const start = performance.now();
    const outcome = await runStepsYielding(
      compactionSteps(fs, {
        dir,
        outputLevel: 1,
        upper,
        upperIsLevel0: true,
        lower,
        grandparents: [],
        deeper: [],
        snapshots: [],
        outputNumbers,
        maxFileSize: 2 * 1024 * 1024,
        blockSize: 4096,
        blockRestartInterval: 16,
        ...tableOptions,
        verifyChecksums: true,
      }),
    );
    const wall = performance.now() - start;
    const used = process.cpuUsage(cpu);
    const n = outcome.entriesIn;
    console.log(
      `round ${round}: ${(((used.user + used.system) * 1000) / n).toFixed(0)} ns of CPU, ${((wall * 1e6) / n).toFixed(0)} ns of wall per input entry ` +
        `(${n} in, ${outcome.entriesOut} out, ${outcome.outputs.length} tables)`,
    );
    for (const f of outcome.outputs) unlinkSync(tableFileName(dir, f.number));
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
