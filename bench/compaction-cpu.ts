/**
 * bench/compaction-cpu: what a compaction costs in CPU per byte it reads, sievekv against LevelDB
 * (classic-level) doing the same thing: how fast each engine's merges are, apart from how fast
 * its writers are (issue 10's disk after an overwrite depends on both).
 *
 *   npm run build && node dist/bench/compaction-cpu.js
 *
 * Per engine, in a fresh directory: N = 1,000,000 db_bench keys (`%016d` of seeded random numbers
 * below N, with repeats; 100-byte half-compressible values) in batches of 1,000, compactRange
 * over everything, then N/2 more such keys, a 3 s pause for the background work, and the timed
 * compactRange over everything. Prints the process's CPU over that call (every thread: sievekv's
 * merges run on its worker, LevelDB's on its background thread), the bytes its compactions read
 * and wrote meanwhile (`leveldb.stats`, each engine's own), and the CPU per MB read and per entry
 * read (MB read over the bytes an entry takes in the fully compacted directory). Both engines
 * with their defaults: sievekv LZ4 with its two filters and key sketch, LevelDB snappy and no
 * filter.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { DB } from '../src/db.js';
import { makeKey, makeValues } from './db/workloads.js';
import { SeededRandom } from './seeded-keys.js';

const N = 1_000_000;
const BATCH = 1000;
const values = makeValues(7);

interface Engine {
  name: string;
  open(dir: string): Promise<void>;
  batch(keys: Uint8Array[], values: Uint8Array[]): Promise<void>;
  compactAll(): Promise<void>;
  stats(): string;
  close(): Promise<void>;
}

function sievekv(): Engine {
  let db: DB;
  return {
    name: 'sievekv',
    async open(dir) {
      db = await DB.open(dir);
    },
    async batch(keys, vals) {
      await db.batch(keys.map((key, i) => ({ type: 'put' as const, key, value: vals[i]! })));
    },
    compactAll: () => db.compactRange(),
    stats: () => db.getProperty('leveldb.stats') ?? '',
    close: () => db.close(),
  };
}

function leveldb(): Engine {
  let db: ClassicLevel<Uint8Array, Uint8Array>;
  return {
    name: 'LevelDB',
    async open(dir) {
      db = new ClassicLevel<Uint8Array, Uint8Array>(dir, { keyEncoding: 'view', valueEncoding: 'view' });
      await db.open();
    },
    async batch(keys, vals) {
      await db.batch(keys.map((key, i) => ({ type: 'put' as const, key, value: vals[i]! })));
    },
    compactAll: () => db.compactRange(makeKey(0), makeKey(N)),
    stats: () => db.getProperty('leveldb.stats'),
    close: () => db.close(),
  };
}

/** The Read(MB) and Write(MB) columns of a `leveldb.stats` table, summed over its levels. */
function compactionMB(stats: string): { read: number; written: number } {
  let read = 0;
  let written = 0;
  for (const line of stats.split('\n')) {
    const cells = line.trim().split(/\s+/);
    if (cells.length !== 6 || !/^\d+$/.test(cells[0]!)) continue;
    read += Number(cells[4]);
    written += Number(cells[5]);
  }
  return { read, written };
}

function directoryBytes(dir: string): number {
  return readdirSync(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
}

async function write(engine: Engine, random: SeededRandom, count: number): Promise<Set<number>> {
  const written = new Set<number>();
  for (let i = 0; i < count; i += BATCH) {
    const keys: Uint8Array[] = [];
    const vals: Uint8Array[] = [];
    for (let j = 0; j < BATCH; j++) {
      const k = random.nextUint32() % N;
      written.add(k);
      keys.push(makeKey(k));
      vals.push(values[(i + j) % values.length]!);
    }
    await engine.batch(keys, vals);
  }
  return written;
}

console.log('bench/compaction-cpu: a full compaction after N/2 overwrites of N random keys, CPU per byte read');
console.log(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, load ${loadavg()[0]!.toFixed(2)}`);
for (const engine of [sievekv(), leveldb()]) {
  const dir = mkdtempSync(join(tmpdir(), 'sievekv-compaction-cpu-'));
  try {
    await engine.open(dir);
    const random = new SeededRandom(3);
    const keys = await write(engine, random, N);
    await engine.compactAll();
    for (const k of await write(engine, random, N / 2)) keys.add(k);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const before = compactionMB(engine.stats());
    const cpu = process.cpuUsage();
    const start = performance.now();
    await engine.compactAll();
    const wall = performance.now() - start;
    const used = process.cpuUsage(cpu);
    const after = compactionMB(engine.stats());
    await engine.close();
    const cpuMs = (used.user + used.system) / 1000;
    const read = after.read - before.read;
    const bytesPerEntry = directoryBytes(dir) / keys.size;
    console.log(
      `${engine.name.padEnd(8)} compactRange ${wall.toFixed(0)} ms, CPU ${cpuMs.toFixed(0)} ms; compactions read ${read.toFixed(1)} MB, ` +
        `wrote ${(after.written - before.written).toFixed(1)} MB; ${(cpuMs / read).toFixed(1)} ms of CPU per MB read, ` +
        `~${((cpuMs * 1e6) / ((read * 1024 * 1024) / bytesPerEntry)).toFixed(0)} ns per entry read (${bytesPerEntry.toFixed(1)} bytes an entry)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
