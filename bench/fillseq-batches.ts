/**
 * bench/fillseq-batches: db_bench's fillbatch alone — 1,000,000 keys (`%016d`) in key order, in
 * batches of 1,000, into a fresh directory with default options — for an A/B of a change to the
 * write path's memtable switch and flush (run a checkout of each commit, alternated: the runs of
 * one build vary by ±15% on this machine, so take medians of several).
 *
 *   npm run build && node dist/bench/fillseq-batches.js [sync|async] ['{"writeBufferSize": 8388608}']
 *
 * Prints the loop's milliseconds and the writers' "memtable full" stall time from sievekv.stats.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DB, type BatchOperation, type OpenOptions } from '../src/db.js';
import { makeKey, makeValues } from './db/workloads.js';

const N = 1_000_000;
const BATCH = 1000;
const mode = process.argv[2] ?? 'sync';
if (mode !== 'sync' && mode !== 'async') throw new Error(`mode must be sync or async, got ${mode}`);
const options = JSON.parse(process.argv[3] ?? '{}') as OpenOptions;
const dir = mkdtempSync(join(tmpdir(), 'sievekv-fillseq-'));
const values = makeValues(7);

const db = await DB.open(dir, options);
const start = performance.now();
let v = 0;
for (let i = 0; i < N; i += BATCH) {
  const ops = new Array<BatchOperation>(BATCH);
  for (let j = 0; j < BATCH; j++) ops[j] = { type: 'put', key: makeKey(i + j), value: values[v++ % values.length]! };
  if (mode === 'sync') db.batchSync(ops);
  else await db.batch(ops);
}
const ms = performance.now() - start;
const stats = JSON.parse(db.getProperty('sievekv.stats')!) as { stallMicrosMemtableFull: number; flushes: number };
await db.close();
rmSync(dir, { recursive: true, force: true });
console.log(`fillseq batches ${mode}: ${ms.toFixed(0)} ms  memtable full ${(stats.stallMicrosMemtableFull / 1000).toFixed(0)} ms  flushes ${stats.flushes}`);
