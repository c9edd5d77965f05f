/**
 * bench/sstable: table build throughput and point-lookup rate (STYLE.md §16: a header stating the
 * setup, then one line per named workload).
 *
 *   npx tsx bench/sstable.ts [--entries=300000] [--lookups=200000]
 *
 * Data, after LevelDB's db_bench: keys are 16 bytes, `%016d` of even numbers 0, 2, 4, … (so the
 * odd numbers in between are absent keys that fall inside the table's key range, the case a
 * filter exists for); values are 100 bytes that compress to about half (50 random printable
 * bytes, written twice), like db_bench's compression ratio 0.5. Every entry is a value at its own
 * sequence number.
 *
 * Workloads:
 * - build <compression> <filter>: TableBuilder into a file in the OS temp directory through
 *   NodeFileSystem, `finish` and `sync` included; MB/s of raw key + value bytes.
 * - get <cache> <keys> <table>: Table.get of seeded random keys, one KeyProbes reset per lookup
 *   as the database does. `warm` = a block cache larger than the table, filled beforehand;
 *   `cold` = no block cache: every lookup that passes the filter reads its block with pread
 *   (from the OS page cache — the file was just written — so "cold" means "not in sievekv's
 *   cache", not "on the disk"), verifies its CRC and decompresses it. `present` keys are in the
 *   table, `absent` ones are the odd numbers between them.
 * Each figure is the median of 3 timed runs after a warm-up run.
 */
import { execSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BloomFilterPolicy } from '../src/filter/bloom.js';
import { KeyProbes } from '../src/filter/key-probes.js';
import type { FilterPolicy } from '../src/filter/policy.js';
import { RibbonFilterPolicy } from '../src/filter/ribbon.js';
import { encodeInternalKey, MAX_SEQUENCE, ValueType, writeTrailer } from '../src/format/internal-key.js';
import { NodeFileSystem } from '../src/fs/node-fs.js';
import { BlockCache } from '../src/sstable/block-cache.js';
import { CompressionType } from '../src/sstable/compression.js';
import type { FilterScope } from '../src/sstable/metaindex.js';
import { GetStatus, Table, TableGetResult } from '../src/sstable/table.js';
import { TableBuilder } from '../src/sstable/table-builder.js';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const ENTRIES = Number(args.get('entries') ?? 300_000);
const LOOKUPS = Number(args.get('lookups') ?? 200_000);
const KEY_SIZE = 16;
const VALUE_SIZE = 100;
const RUNS = 3;

/** xorshift32: seeded, deterministic workload data (not for anything persisted). */
function xorshift(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

/** `%016d` of `n` into `dst[off, off + 16)`. */
function writeKey(dst: Uint8Array, off: number, n: number): void {
  for (let i = KEY_SIZE - 1; i >= 0; i--) {
    dst[off + i] = 48 + (n % 10);
    n = Math.floor(n / 10);
  }
}

function makeValues(count: number, seed: number): Uint8Array {
  const next = xorshift(seed);
  const out = new Uint8Array(count * VALUE_SIZE);
  const half = VALUE_SIZE / 2;
  for (let i = 0; i < count; i++) {
    const at = i * VALUE_SIZE;
    for (let j = 0; j < half; j++) out[at + j] = 32 + Math.floor(next() * 95);
    out.copyWithin(at + half, at, at + half);
  }
  return out;
}

interface TableSpec {
  label: string;
  compression: CompressionType;
  policy?: FilterPolicy;
  scope?: FilterScope;
}

const bloom = new BloomFilterPolicy(10);
const ribbon = new RibbonFilterPolicy(7);
const policies = [bloom, ribbon];
const dir = mkdtempSync(join(tmpdir(), 'sievekv-bench-sst-'));
const fs = new NodeFileSystem();
const values = makeValues(1024, 42);

function build(spec: TableSpec, path: string): { seconds: number; fileSize: number; filterSize: number } {
  const t0 = performance.now();
  const file = fs.createWritable(path);
  const builder = new TableBuilder(file, { compression: spec.compression, filterPolicy: spec.policy, filterScope: spec.scope });
  const key = new Uint8Array(KEY_SIZE + 8);
  for (let i = 0; i < ENTRIES; i++) {
    writeKey(key, 0, 2 * i);
    writeTrailer(key, KEY_SIZE, i + 1, ValueType.VALUE);
    const v = (i % 1024) * VALUE_SIZE;
    builder.addSlices(key, 0, key.length, values, v, v + VALUE_SIZE);
  }
  const props = builder.finish();
  file.sync();
  file.close();
  return { seconds: (performance.now() - t0) / 1000, fileSize: builder.fileSize, filterSize: props.filterSize };
}

/** Seeded lookup keys: user keys and their lookup keys, made before timing. */
function lookupKeys(present: boolean, seed: number): { user: Uint8Array[]; lookup: Uint8Array[] } {
  const next = xorshift(seed);
  const user: Uint8Array[] = [];
  const lookup: Uint8Array[] = [];
  for (let i = 0; i < LOOKUPS; i++) {
    const n = 2 * Math.floor(next() * ENTRIES) + (present ? 0 : 1);
    const k = new Uint8Array(KEY_SIZE);
    writeKey(k, 0, n);
    user.push(k);
    lookup.push(encodeInternalKey(k, MAX_SEQUENCE, ValueType.VALUE));
  }
  return { user, lookup };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

function timeLookups(table: Table, keys: { user: Uint8Array[]; lookup: Uint8Array[] }, want: GetStatus): number {
  const probes = new KeyProbes();
  const result = new TableGetResult();
  const { user, lookup } = keys;
  const t0 = performance.now();
  for (let i = 0; i < user.length; i++) {
    probes.reset(user[i]!);
    if (table.get(lookup[i]!, user[i]!, probes, result) !== want) throw new Error(`lookup ${i} gave the wrong status`);
  }
  return (performance.now() - t0) / 1000;
}

const commit = (() => {
  try {
    return execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
})();
const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const MB = 1024 * 1024;
const rawBytes = ENTRIES * (KEY_SIZE + 8 + VALUE_SIZE);

console.log('# bench/sstable');
console.log(`node ${process.version}  cpu ${cpus()[0]?.model ?? '?'} x${cpus().length}  load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.log(`commit ${commit}  ${new Date().toISOString()}`);
console.log(
  `entries ${fmt(ENTRIES)}  key ${KEY_SIZE} B (+8 trailer)  value ${VALUE_SIZE} B (compresses ~2x)  raw ${fmt(rawBytes / MB, 1)} MiB  ` +
    `blockSize 4096  restartInterval 16  lookups/run ${fmt(LOOKUPS)}  median of ${RUNS} runs`,
);
console.log(`filters: bloom = ${bloom.name} 10 bits/key; ribbon = ${ribbon.name} 7 bits/key (≈ Bloom-10's rate)`);
console.log('');

const builds: TableSpec[] = [
  { label: 'none  block-bloom', compression: CompressionType.NONE, policy: bloom, scope: 'block' },
  { label: 'snappy block-bloom', compression: CompressionType.SNAPPY, policy: bloom, scope: 'block' },
  { label: 'lz4   block-bloom', compression: CompressionType.LZ4, policy: bloom, scope: 'block' },
  { label: 'lz4   no-filter', compression: CompressionType.LZ4 },
  { label: 'lz4   table-bloom', compression: CompressionType.LZ4, policy: bloom, scope: 'table' },
  { label: 'lz4   table-ribbon', compression: CompressionType.LZ4, policy: ribbon, scope: 'table' },
];
const paths = new Map<string, string>();
build(builds[2]!, join(dir, 'warmup.ldb')); // JIT warm-up
for (const spec of builds) {
  const path = join(dir, `${spec.label.replace(/\s+/g, '-')}.ldb`);
  const runs = [];
  let last = { seconds: 0, fileSize: 0, filterSize: 0 };
  for (let r = 0; r < RUNS; r++) {
    last = build(spec, path);
    runs.push(last.seconds);
  }
  paths.set(spec.label, path);
  const s = median(runs);
  console.log(
    `build  ${spec.label.padEnd(19)} ${fmt(rawBytes / MB / s, 1).padStart(6)} MB/s  ${fmt(s * 1000).padStart(5)} ms  ` +
      `file ${fmt(last.fileSize / MB, 2)} MiB  filter ${fmt(last.filterSize / 1024, 0)} KiB`,
  );
}
console.log('');

const keySets = { present: lookupKeys(true, 7), absent: lookupKeys(false, 8) };
const lookupTables: [string, string][] = [
  ['lz4   no-filter', 'lz4   no-filter'],
  ['lz4   block-bloom', 'lz4   block-bloom'],
  ['lz4   table-bloom', 'lz4   table-bloom'],
  ['lz4   table-ribbon', 'lz4   table-ribbon'],
  ['none  block-bloom', 'none  block-bloom'],
  ['snappy block-bloom', 'snappy block-bloom'],
];
for (const cache of ['warm', 'cold'] as const) {
  for (const [label] of lookupTables) {
    const otherCompression = !label.startsWith('lz4');
    for (const kind of ['present', 'absent'] as const) {
      if (otherCompression && cache === 'warm') continue; // compression only matters when blocks are read
      const blockCache = cache === 'warm' ? new BlockCache(1 << 30) : undefined;
      const table = Table.open(fs, paths.get(label)!, { filterPolicies: policies, blockCache });
      if (blockCache !== undefined) {
        const it = table.newIterator();
        for (it.seekToFirst(); it.valid(); it.next()) {
          // touch every block so the cache holds them all
        }
        it.close();
      }
      const want = kind === 'present' ? GetStatus.FOUND : GetStatus.NOT_FOUND;
      timeLookups(table, keySets[kind], want); // warm-up
      table.stats.reset();
      const runs = [];
      for (let r = 0; r < RUNS; r++) runs.push(timeLookups(table, keySets[kind], want));
      const s = median(runs);
      const st = table.stats;
      const ops = LOOKUPS * RUNS;
      console.log(
        `get    ${cache} ${kind.padEnd(7)} ${label.padEnd(19)} ${fmt(LOOKUPS / s).padStart(9)} ops/s  ${fmt((s * 1e6) / LOOKUPS, 2).padStart(6)} µs/op  ` +
          `blocks read/op ${fmt(st.blocksRead / ops, 3)}  filter skipped ${fmt((100 * st.filterNegatives) / ops, 1)}%`,
      );
      table.close();
    }
  }
}

rmSync(dir, { recursive: true, force: true });
