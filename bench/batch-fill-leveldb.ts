/**
 * bench/batch-fill-leveldb: bench/batch-fill's two loops through LevelDB (classic-level, its
 * defaults: 4 MiB write buffer, 2 MiB files, snappy, no filter), for what bench/db does not show
 * of LevelDB: the bytes and time its compactions spend per level (`leveldb.stats`) and the CPU
 * the process uses, to set against sievekv's on the same keys.
 *
 *   npm run build && node dist/bench/batch-fill-leveldb.js
 *
 * fillrandombatch writes N = 1,000,000 keys (db_bench's `%016d`, every key once, in the seeded
 * random order bench/batch-fill uses) in `await db.batch`es of 1,000 into a fresh directory;
 * overwritebatch then writes N seeded random keys (with repeats) over it, reopened. Values are
 * db_bench's (100 bytes, half compressible). Each loop prints its ops/s, then `leveldb.stats`;
 * the last line the directory's bytes once closed and the process's user + system CPU.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { batchKeyOrders } from './batch-keys.js';
import { makeKey, makeValues } from './db/workloads.js';

const N = 1_000_000;
const BATCH = 1000;
const dir = mkdtempSync(join(tmpdir(), 'sievekv-batch-fill-leveldb-'));
const values = makeValues(7);
const { shuffled, repeats } = batchKeyOrders(N);

async function run(label: string, keys: Uint32Array): Promise<void> {
  const db = new ClassicLevel<Buffer, Buffer>(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  await db.open();
  const start = performance.now();
  let v = 0;
  for (let i = 0; i < N; i += BATCH) {
    const ops = new Array<{ type: 'put'; key: Buffer; value: Buffer }>(BATCH);
    for (let j = 0; j < BATCH; j++) ops[j] = { type: 'put', key: makeKey(keys[i + j]!), value: values[v++ % values.length]! };
    await db.batch(ops);
  }
  const ms = performance.now() - start;
  console.log(`${label} LevelDB: ${Math.round((N / ms) * 1000)} ops/s`);
  console.log(db.getProperty('leveldb.stats'));
  await db.close();
}

await run('fillrandombatch', shuffled);
await run('overwritebatch ', repeats);
let bytes = 0;
for (const name of readdirSync(dir)) bytes += statSync(join(dir, name)).size;
const cpu = process.cpuUsage();
console.log(`disk ${(bytes / 1e6).toFixed(1)} MB  CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s (user ${(cpu.user / 1e6).toFixed(1)}, system ${(cpu.system / 1e6).toFixed(1)})`);
rmSync(dir, { recursive: true, force: true });
