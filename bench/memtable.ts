/**
 * bench/memtable: the memtable insert and the flush, alone — the two costs of the write path that
 * grow per entry, below the database. For a before/after comparison run it in two checkouts.
 *
 *   npm run build && node dist/bench/memtable.js [entries=36000]
 *
 * insert: `entries` random 16-byte keys (`%016d` of xorshift numbers) with 100-byte values, in
 * WriteBatches of 1,000 decoded and added as the database does (BatchEntries + addEntries), into a
 * fresh memtable per run; ns per entry, best of 7 runs. 36,000 entries is about what a default
 * 4 MiB memtable holds. flush: 200,000 such entries written to a table by flushMemTable (default
 * table options: lz4, Bloom per block and the whole-table filter) on the real file system,
 * fsync included; ns per entry of process CPU time, best of 5.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { flushMemTable, type TableShape } from '../src/compaction/jobs.js';
import { filterChoice } from '../src/compaction/policy-spec.js';
import { NodeFileSystem } from '../src/fs/node-fs.js';
import { MemTable } from '../src/memtable/memtable.js';
import { resolveOptions } from '../src/options.js';
import { BatchEntries, WriteBatch } from '../src/wal/write-batch.js';
import { makeValues } from './db/workloads.js';

const entries = Number(process.argv[2] ?? 36_000);
const values = makeValues(7);

function randomKeys(n: number): Buffer[] {
  const keys: Buffer[] = [];
  let s = 99;
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    keys.push(Buffer.from(String(s >>> 0).padStart(16, '0')));
  }
  return keys;
}

function fill(keys: readonly Buffer[]): MemTable {
  const mem = new MemTable({ bloomBits: keys.length * 10, initialArenaBytes: keys.length * 160 });
  const decoded = new BatchEntries();
  let seq = 1;
  for (let i = 0; i < keys.length; i += 1000) {
    const batch = new WriteBatch();
    for (let j = i; j < i + 1000 && j < keys.length; j++) batch.put(keys[j]!, values[j % values.length]!);
    const rep = batch.contents();
    decoded.decode(rep);
    mem.addEntries(rep, decoded, seq);
    seq += decoded.count;
  }
  return mem;
}

const keys = randomKeys(entries);
let best = Infinity;
for (let run = 0; run < 7; run++) {
  const start = process.hrtime.bigint();
  fill(keys);
  best = Math.min(best, Number(process.hrtime.bigint() - start) / entries);
}
console.log(`insert ${entries} entries in batches of 1,000: ${best.toFixed(0)} ns/entry (best of 7)`);

const o = resolveOptions({});
const shape: TableShape = {
  blockSize: o.blockSize,
  blockRestartInterval: o.blockRestartInterval,
  compression: o.compression,
  filter: filterChoice(o.filterPolicy),
  tableFilter: filterChoice(o.tableFilterPolicy),
  filterScope: o.filterScope,
};
const mem = fill(randomKeys(200_000));
const dir = mkdtempSync(join(tmpdir(), 'sievekv-bench-memtable-'));
const fs = new NodeFileSystem();
best = Infinity;
for (let run = 0; run < 5; run++) {
  const cpu = process.cpuUsage();
  flushMemTable(fs, dir, run + 1, mem.iterator(), shape);
  const used = process.cpuUsage(cpu);
  best = Math.min(best, ((used.user + used.system) * 1000) / 200_000);
}
console.log(`flush 200,000 entries: ${best.toFixed(0)} ns/entry of CPU (best of 5), ${((119 / best) * 1000).toFixed(0)} MB/s of keys and values`);
rmSync(dir, { recursive: true, force: true });
