/**
 * bench/compaction: leveled compaction on worker threads (issue 5), after LevelDB's db_bench
 * (STYLE.md §16: a header stating the setup, then one line per named workload).
 *
 *   npx tsx bench/compaction.ts [--entries=1000000] [--read-every=100] [--reads=10] [--peer=1]
 *
 * Data: 16-byte keys, `%016d` of a seeded random number in [0, entries) (so some keys repeat and
 * some are never written, as db_bench's fillrandom); 100-byte values that compress to about half
 * (50 random printable bytes written twice, db_bench's compression ratio 0.5), regenerated from
 * the write's index. The database has its default options (4 MiB memtable, 2 MiB files, level 0
 * compacted at 4 files, level 1 of 10 MiB ×10 per level, lz4, Bloom 10 bits/key), in a fresh
 * directory under the OS temp directory, unsynced writes.
 *
 * Workloads:
 * - fillrandom+reads <compaction on|off>: `entries` puts; every `read-every` puts the loop yields
 *   one turn of the event loop (so job results are installed, as in a server) and then times
 *   `reads` gets of random keys in [0, entries) with process.hrtime.bigint, each awaited.
 *   Writes/s and MB/s count the put time only (the loop's time minus the gets'). "off" sets the
 *   level-0 triggers to 1000 and level 1's target to 1 TiB: flushes still run on their worker,
 *   no compaction does — the baseline for get latency while the worker compacts. Write
 *   amplification is sievekv.stats's: table bytes written (flushes + compactions) per byte of
 *   WAL records, at the end of the fill.
 * - readrandom settled: the same gets on the compacted database once its background work is done.
 * - space: fillrandom then overwrite (2 × entries puts), compactRange(), close; the SSTs' bytes
 *   over the live data after compression (bench/live-data-size.ts: one table of exactly the live
 *   entries with the same table options); the last level's tables must hold one version per key.
 *   With --peer=1 the same writes go through classic-level (LevelDB 1.20, snappy, Bloom 10
 *   bits/key, writes in batches of 1000), then its compactRange; its ratio is against a
 *   reference built with snappy.
 */
import { execSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { DB, type OpenOptions } from '../src/db.js';
import { BloomFilterPolicy } from '../src/filter/bloom.js';
import { NodeFileSystem } from '../src/fs/node-fs.js';
import { levelContents, liveDataSize, type LiveEntry } from './live-data-size.js';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const ENTRIES = Number(args.get('entries') ?? 1_000_000);
const READ_EVERY = Number(args.get('read-every') ?? 100);
const READS = Number(args.get('reads') ?? 10);
const PEER = (args.get('peer') ?? '1') !== '0';
const KEY_SIZE = 16;
const VALUE_SIZE = 100;
const SEED = 0x5eed_c0a1;

/** mulberry32 from `seed`: workload data only. */
function mulberry(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `%016d` of `n` into `dst`. */
function writeKey(dst: Uint8Array, n: number): Uint8Array {
  for (let i = KEY_SIZE - 1; i >= 0; i--) {
    dst[i] = 48 + (n % 10);
    n = Math.floor(n / 10);
  }
  return dst;
}

/** The value of write number `w` into `dst`: 50 printable bytes from a generator seeded by `w`, twice. */
function writeValue(dst: Uint8Array, w: number): Uint8Array {
  const next = mulberry(Math.imul(w + 1, 0x9e3779b1) ^ SEED);
  const half = VALUE_SIZE / 2;
  for (let j = 0; j < half; j++) dst[j] = 32 + Math.floor(next() * 95);
  dst.copyWithin(half, 0, half);
  return dst;
}

function commit(): string {
  try {
    const head = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
    const dirty = execSync('git status --porcelain -- src bench/compaction.ts bench/live-data-size.ts', { encoding: 'utf8' }).trim();
    return dirty === '' ? head : `${head}+uncommitted`;
  } catch {
    return 'unknown';
  }
}

const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

interface Latency {
  p50: number;
  p99: number;
  max: number;
  count: number;
}

function latency(samples: Float64Array, count: number): Latency {
  const s = samples.slice(0, count).sort();
  return { p50: s[Math.floor(count * 0.5)] ?? 0, p99: s[Math.floor(count * 0.99)] ?? 0, max: s[count - 1] ?? 0, count };
}

const us = (ns: number): string => fmt(ns / 1000, 1);
const showLatency = (l: Latency): string => `get p50 ${us(l.p50)} µs  p99 ${us(l.p99)} µs  max ${us(l.max)} µs  (${fmt(l.count)} gets)`;

function stats(db: DB): { writeAmplification: number; levels: { level: number; files: number; bytes: number; compactions: number }[] } {
  return JSON.parse(db.getProperty('sievekv.stats')!);
}

const levelLine = (db: DB): string =>
  stats(db)
    .levels.map((l) => `L${l.level} ${l.files}f/${fmt(l.bytes / 1048576, 1)}MiB/${l.compactions}c`)
    .join(' ');

/** Times `READS` gets of random keys; returns the count written to `samples` from `at`. */
async function timedGets(db: DB, next: () => number, key: Uint8Array, samples: Float64Array, at: number): Promise<number> {
  let n = at;
  for (let r = 0; r < READS && n < samples.length; r++) {
    writeKey(key, Math.floor(next() * ENTRIES));
    const t0 = process.hrtime.bigint();
    await db.get(key);
    samples[n++] = Number(process.hrtime.bigint() - t0);
  }
  return n;
}

/** Waits until no compaction has finished for a while (the worker has nothing left to do). */
async function settle(db: DB): Promise<void> {
  let last = '';
  for (let quiet = 0; quiet < 10; ) {
    await new Promise((r) => setTimeout(r, 200));
    const now = levelLine(db);
    quiet = now === last ? quiet + 1 : 0;
    last = now;
  }
}

async function fillWithReads(label: string, options: OpenOptions, settledReads: boolean): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sievekv-bench-compaction-'));
  try {
    const db = await DB.open(dir, options);
    const next = mulberry(SEED);
    const readNext = mulberry(SEED ^ 0x7ead);
    const key = new Uint8Array(KEY_SIZE);
    const readKey = new Uint8Array(KEY_SIZE);
    const value = new Uint8Array(VALUE_SIZE);
    const samples = new Float64Array(Math.ceil(ENTRIES / READ_EVERY) * READS);
    let n = 0;
    let getNs = 0;
    const t0 = process.hrtime.bigint();
    for (let w = 0; w < ENTRIES; w++) {
      await db.put(writeKey(key, Math.floor(next() * ENTRIES)), writeValue(value, w));
      if ((w + 1) % READ_EVERY === 0) {
        await turn();
        const g0 = process.hrtime.bigint();
        n = await timedGets(db, readNext, readKey, samples, n);
        getNs += Number(process.hrtime.bigint() - g0);
      }
    }
    const seconds = (Number(process.hrtime.bigint() - t0) - getNs) / 1e9;
    const s = stats(db);
    console.log(
      `fillrandom+reads ${label.padEnd(15)} ${fmt(ENTRIES / seconds).padStart(9)} writes/s  ${fmt((ENTRIES * (KEY_SIZE + VALUE_SIZE)) / seconds / 1048576, 1)} MB/s  ` +
        `write-amp ${s.writeAmplification}  ${showLatency(latency(samples, n))}`,
    );
    console.log(`  levels at the end: ${levelLine(db)}`);
    if (settledReads) {
      await settle(db);
      const m = await timedGets(db, readNext, readKey, (samples.fill(0), samples), 0);
      let k = m;
      while (k < samples.length) k = await timedGets(db, readNext, readKey, samples, k);
      console.log(`readrandom settled               ${showLatency(latency(samples, k))}`);
      console.log(`  levels: ${levelLine(db)}  write-amp ${stats(db).writeAmplification}`);
    }
    await db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** fillrandom then overwrite: calls `put(keyNumber, writeIndex)`; returns each key's last write index (−1: never). */
async function fillAndOverwrite(put: (k: number, w: number) => Promise<void>): Promise<Int32Array> {
  const last = new Int32Array(ENTRIES).fill(-1);
  const next = mulberry(SEED ^ 0x5ace);
  for (let w = 0; w < 2 * ENTRIES; w++) {
    const k = Math.floor(next() * ENTRIES);
    await put(k, w);
    last[k] = w;
  }
  return last;
}

/** The live entries in key order (keys are zero-padded numbers: numeric order is byte order). */
function* liveEntries(last: Int32Array): Iterable<LiveEntry> {
  const key = new Uint8Array(KEY_SIZE);
  const value = new Uint8Array(VALUE_SIZE);
  for (let k = 0; k < last.length; k++) {
    const w = last[k]!;
    if (w >= 0) yield [writeKey(key, k), w + 1, writeValue(value, w)];
  }
}

function dirTableBytes(dir: string): number {
  return readdirSync(dir)
    .filter((n) => n.endsWith('.ldb') || n.endsWith('.sst'))
    .reduce((s, n) => s + statSync(join(dir, n)).size, 0);
}

async function spaceSievekv(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sievekv-bench-space-'));
  try {
    const db = await DB.open(dir);
    const key = new Uint8Array(KEY_SIZE);
    const value = new Uint8Array(VALUE_SIZE);
    const t0 = performance.now();
    // Each put is one batch of one entry: write w gets sequence number w + 1.
    const last = await fillAndOverwrite((k, w) => db.put(writeKey(key, k), writeValue(value, w)));
    const t1 = performance.now();
    await db.compactRange();
    const t2 = performance.now();
    const writeAmp = stats(db).writeAmplification;
    await db.close();
    const levels = levelContents(new NodeFileSystem(), dir);
    const sst = levels.reduce((s, l) => s + l.bytes, 0);
    const liveKeys = last.reduce((s, w) => s + (w >= 0 ? 1 : 0), 0);
    const reference = liveDataSize(liveEntries(last), {});
    const bottom = levels[levels.length - 1]!;
    const oneVersion = levels.length === 1 && bottom.entries === liveKeys && bottom.userKeys === liveKeys && bottom.deletions === 0;
    console.log(
      `space sievekv       ${fmt(liveKeys)} live keys of ${fmt(2 * ENTRIES)} writes (${fmt((t1 - t0) / 1000, 1)} s), compactRange ${fmt((t2 - t1) / 1000, 1)} s: ` +
        `SSTs ${fmt(sst / 1048576, 2)} MiB, live data after compression ${fmt(reference / 1048576, 2)} MiB, ratio ${(sst / reference).toFixed(3)}  ` +
        `(on disk ${fmt(dirTableBytes(dir) / 1048576, 2)} MiB; write-amp ${writeAmp})`,
    );
    console.log(
      `  levels: ${levels.map((l) => `L${l.level} ${l.files}f ${fmt(l.entries)} entries ${fmt(l.userKeys)} keys ${l.deletions} dels`).join('; ')}  ` +
        `one version per key: ${oneVersion ? 'yes' : 'NO'}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function spaceClassicLevel(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sievekv-bench-space-leveldb-'));
  try {
    const db = new ClassicLevel<Uint8Array, Uint8Array>(dir, { keyEncoding: 'view', valueEncoding: 'view' });
    await db.open();
    let batch = db.batch();
    const t0 = performance.now();
    const last = await fillAndOverwrite(async (k, w) => {
      batch.put(writeKey(new Uint8Array(KEY_SIZE), k), writeValue(new Uint8Array(VALUE_SIZE), w));
      if (batch.length >= 1000) {
        await batch.write();
        batch = db.batch();
      }
    });
    if (batch.length > 0) await batch.write();
    const t1 = performance.now();
    await db.compactRange(writeKey(new Uint8Array(KEY_SIZE), 0), writeKey(new Uint8Array(KEY_SIZE), ENTRIES));
    const t2 = performance.now();
    await db.close();
    const sst = dirTableBytes(dir);
    const reference = liveDataSize(liveEntries(last), { compression: 'snappy', filterPolicy: new BloomFilterPolicy(10) });
    console.log(
      `space classic-level (LevelDB 1.20) writes ${fmt((t1 - t0) / 1000, 1)} s, compactRange ${fmt((t2 - t1) / 1000, 1)} s: ` +
        `SSTs ${fmt(sst / 1048576, 2)} MiB, live data after compression (snappy) ${fmt(reference / 1048576, 2)} MiB, ratio ${(sst / reference).toFixed(3)}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log('# bench/compaction');
console.log(`node ${process.version}  cpu ${cpus()[0]?.model ?? '?'} x${cpus().length}  load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.log(`commit ${commit()}  ${new Date().toISOString()}`);
console.log(
  `entries ${fmt(ENTRIES)}  key ${KEY_SIZE} B  value ${VALUE_SIZE} B (compresses to ~50%)  default options (memtable 4 MiB, files 2 MiB, ` +
    `L0 trigger 4/8/12, L1 10 MiB ×10, lz4, Bloom 10)  unsynced writes; ${READS} gets every ${READ_EVERY} puts`,
);
console.log('');
await fillWithReads('compaction on', {}, true);
await fillWithReads('compaction off', { l0CompactionTrigger: 1000, l0SlowdownTrigger: 1000, l0StopTrigger: 1000, maxBytesForLevelBase: 2 ** 40 }, false);
await spaceSievekv();
if (PEER) await spaceClassicLevel();
