/**
 * bench/merge: the CPU a compaction's merge spends per input entry, alone on one thread — the
 * before/after figure for a change to the merge loop, the table builder or the filters (run it
 * in a checkout of each commit, alternated).
 *
 *   npm run build && node dist/bench/merge.js
 *
 * Setup: five level-1 tables holding about 130,000 distinct seeded random db_bench keys (`%016d` of
 * a number below 1,000,000; 100-byte half-compressible values), then four level-0 tables of 35,000
 * more each (newer sequence numbers, as in a database), the
 * default table options (lz4, Bloom block filter, blocked Bloom table filter, 4 KiB blocks), in a temporary
 * directory. Each round merges them all into level 1 (2 MiB outputs), as a worker does: the merge's
 * steps with a turn of the event loop between them (compaction/job-steps.ts). Prints, per round,
 * CPU and wall time per input entry; the first rounds warm the JIT up.
 */
import { execSync } from 'node:child_process';
import { mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { compactionSteps } from '../src/compaction/compaction.js';
import { runStepsYielding } from '../src/compaction/job-steps.js';
import { BloomFilterPolicy } from '../src/filter/bloom.js';
import { BlockedBloomFilterPolicy } from '../src/filter/blocked-bloom.js';
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
  tableFilterPolicy: new BlockedBloomFilterPolicy(15),
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
// Level 1 first, so its entries are older than level 0's, as in a database; its keys distinct
// before they are cut into files, so no two level-1 files share a key.
const lowerKeys = [...new Set(randomKeys(140_000))].sort((a, b) => a - b);
const perFile = Math.ceil(lowerKeys.length / 5);
const lower = [0, 1, 2, 3, 4].map((i) => writeTable(10 + i, lowerKeys.slice(i * perFile, (i + 1) * perFile)));
const upper = [1, 2, 3, 4].map((n) => writeTable(n, randomKeys(35_000)));

let commit = 'unknown';
try {
  commit = execSync('git rev-parse --short HEAD', { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
} catch {
  // not a git checkout
}
console.log(`bench/merge: one level-0 merge (4 level-0 + 5 level-1 tables) per round, stepped as on a worker`);
console.log(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, load ${loadavg()[0]!.toFixed(2)}, commit ${commit}`);

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
