/**
 * bench/batch-fill: sievekv alone on issue 10's batched workloads, with what bench/db does not
 * break down — where writers waited, level 0 at the end, close, reopen and peak RSS — for a
 * before/after comparison of one change (run it in two checkouts, one after the other).
 *
 *   npm run build && node dist/bench/batch-fill.js [sync|async] ['{"writeBufferSize": 8388608}']
 *
 * fillrandombatch writes N = 1,000,000 keys (db_bench's `%016d`, every key once, in a seeded random
 * order) in batches of 1,000 into a fresh directory; overwritebatch then writes N seeded random
 * keys (with repeats) over it, reopened. Values are db_bench's (100 bytes, half compressible).
 * `sync` calls batchSync, `async` awaits db.batch; the options (JSON) go to DB.open. Each line:
 * ops/s of the loop, the stall time by reason from `sievekv.stats`, the time of close() after the
 * loop, the directory's bytes once closed, level 0's files before the close and the process's RSS
 * high-water mark so far (so overwritebatch's line holds both loops, not the reopen); the last line the
 * reopen's time, the peak RSS and the process's CPU (user + system, every thread). With SK_KEEP set,
 * the directory is kept (its path printed last) for a look at its LOG; with SK_STATS set, each
 * loop's end also prints the `leveldb.stats` table (compaction time and bytes per level).
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DB, type BatchOperation, type OpenOptions } from '../src/db.js';
import { batchKeyOrders } from './batch-keys.js';
import { makeKey, makeValues } from './db/workloads.js';

const N = 1_000_000;
const BATCH = 1000;
const mode = process.argv[2] ?? 'sync';
if (mode !== 'sync' && mode !== 'async') throw new Error(`mode must be sync or async, got ${mode}`);
const options = JSON.parse(process.argv[3] ?? '{}') as OpenOptions;
const dir = mkdtempSync(join(tmpdir(), 'sievekv-batch-fill-'));
const values = makeValues(7);
const { shuffled, repeats } = batchKeyOrders(N);

async function run(label: string, keys: Uint32Array): Promise<void> {
  const db = await DB.open(dir, options);
  const start = performance.now();
  let v = 0;
  for (let i = 0; i < N; i += BATCH) {
    const ops = new Array<BatchOperation>(BATCH);
    for (let j = 0; j < BATCH; j++) ops[j] = { type: 'put', key: makeKey(keys[i + j]!), value: values[v++ % values.length]! };
    if (mode === 'sync') db.batchSync(ops);
    else await db.batch(ops);
  }
  const ms = performance.now() - start;
  const s = JSON.parse(db.getProperty('sievekv.stats')!) as Record<string, number> & { levels: { files: number }[] };
  if (process.env.SK_STATS !== undefined) console.log(db.getProperty('leveldb.stats'));
  const closeStart = performance.now();
  await db.close();
  const closeMs = performance.now() - closeStart;
  let bytes = 0;
  for (const name of readdirSync(dir)) bytes += statSync(join(dir, name)).size;
  const stall = (reason: string): string => `${(s[`stallMicros${reason}`]! / 1000).toFixed(0)} ms (${s[`stalls${reason}`]})`;
  console.log(
    `${label} ${mode}: ${Math.round((N / ms) * 1000)} ops/s  stalls: memtable full ${stall('MemtableFull')}, ` +
      `L0 slowdown ${stall('L0Slowdown')}, L0 stop ${stall('L0Stop')}  close ${closeMs.toFixed(0)} ms  ` +
      `disk ${(bytes / 1e6).toFixed(1)} MB  L0 ${s.levels[0]!.files} files  RSS high-water mark ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`,
  );
}

await run('fillrandombatch', shuffled);
await run('overwritebatch ', repeats);
const reopenStart = performance.now();
const db = await DB.open(dir, options);
const reopenMs = performance.now() - reopenStart;
await db.close();
const cpu = process.cpuUsage();
console.log(
  `reopen ${reopenMs.toFixed(0)} ms  peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB  ` +
    `CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s (all threads)`,
);
if (process.env.SK_KEEP === undefined) rmSync(dir, { recursive: true, force: true });
else console.log(dir);
