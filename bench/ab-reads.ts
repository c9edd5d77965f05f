/**
 * bench/ab-reads: two builds of sievekv read the same database in one process, in alternated
 * chunks, so that a machine whose speed wanders from minute to minute (a shared host: ±10-45%
 * between runs here) slows both alike. For before/after figures of a read-path change:
 *
 *   npm run build && node dist/bench/ab-reads.js DIR BUILD_A BUILD_B [get|missing|seek|scan] [chunks=30] [options JSON] [puts=0]
 *
 * BUILD_A and BUILD_B are compiled trees holding `src/db.js` (a checkout's `dist`, after `npm run
 * build` there). DIR is filled first if it holds no database (bench/filled-db.ts); each build opens
 * its own copy of it (with the open options given, default none), and both wait until their level 0 has fewer than 4 files and 2 s more
 * (with `{"readOnly":true}`, only the 2 s: level 0 stays as DIR has it, as after a fill).
 * With `puts` > 0, each then takes that many seeded random puts of db_bench entries (the same in
 * both), which stay in its memtable if they fit (28,000 fill most of the default 4 MiB): reads
 * of a database being written to, not one just opened (whose memtables are empty).
 * Then chunks alternate A B B A …, each of 20,000 operations on keys of one seeded sequence:
 *   - get: `getSync` of random present keys;
 *   - missing: `getSync` of absent keys (a present key minus its last byte, as bench/db's);
 *   - seek: new iterator, seek a random key, `nextSync`, close (bench/db's seekrandom);
 *   - scan: one iterator per chunk, sought to the chunk's first key, then `nextSync` for each
 *     operation (from the first key again at the end).
 * The first two chunks of each build are warm-up and not counted. Prints µs per operation (mean
 * and median of the chunks) of each build and B ÷ A.
 *
 * Run the same build in both places first (BUILD_A = BUILD_B) to see the harness's own bias: on the
 * development machine `get` gave B ÷ A 0.99-1.00 so, but `scan` 1.07-1.15 (its second database ran
 * slower). Where that shows, run both orders and take the geometric mean of B ÷ A and 1 / (A ÷ B).
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { DB as DBType } from '../src/db.js';
import { KEY_BYTES, makeKey, makeValues } from './db/workloads.js';
import { FILLED_KEYS, filledDatabase } from './filled-db.js';
import { SeededRandom } from './seeded-keys.js';

const CHUNK = 20_000;
const WARM_CHUNKS = 2;
type Workload = 'get' | 'missing' | 'seek' | 'scan';

const [dirArg, buildA, buildB, workloadArg = 'get', chunksArg = '30', optionsArg = '{}', putsArg = '0'] = process.argv.slice(2);
if (buildA === undefined || buildB === undefined) {
  throw new Error('usage: node dist/bench/ab-reads.js DIR BUILD_A BUILD_B [get|missing|seek|scan] [chunks] [options JSON]');
}
if (!['get', 'missing', 'seek', 'scan'].includes(workloadArg)) throw new Error(`unknown workload ${workloadArg}`);
const workload = workloadArg as Workload;
const chunks = Number(chunksArg);
const source = await filledDatabase(dirArg);

async function openBuild(build: string): Promise<{ db: DBType; copy: string }> {
  const { DB } = (await import(pathToFileURL(resolve(build, 'src/db.js')).href)) as { DB: typeof DBType };
  const copy = mkdtempSync(join(tmpdir(), 'sievekv-ab-'));
  cpSync(source, copy, { recursive: true });
  const db = await DB.open(copy, JSON.parse(optionsArg) as object);
  return { db, copy };
}

const builds = [await openBuild(buildA), await openBuild(buildB)];
// A read-only open compacts nothing: its level 0 stays as DIR has it (a database just filled, say).
const readOnly = (JSON.parse(optionsArg) as { readOnly?: boolean }).readOnly === true;
for (const { db } of readOnly ? [] : builds) {
  for (let i = 0; i < 1200 && Number(db.getProperty('sievekv.num-files-at-level0')) >= 4; i++) await new Promise((r) => setTimeout(r, 50));
}
await new Promise((r) => setTimeout(r, 2000));
const values = makeValues(3);
for (const { db } of builds) {
  const writes = new SeededRandom(11);
  for (let i = 0; i < Number(putsArg); i++) db.putSync(makeKey(writes.nextUint32() % FILLED_KEYS), values[i % values.length]!);
}

function run(db: DBType, keys: Buffer[]): void {
  if (workload === 'scan') {
    const it = db.iterator();
    it.seek(keys[0]!);
    for (let i = 0; i < keys.length; i++) {
      if (it.nextSync() === undefined) it.seek(Buffer.alloc(0));
    }
    it.close();
    return;
  }
  if (workload === 'seek') {
    for (const key of keys) {
      const it = db.iterator();
      it.seek(key);
      it.nextSync();
      it.close();
    }
    return;
  }
  for (const key of keys) db.getSync(key);
}

const random = new SeededRandom(29);
const times: number[][] = [[], []];
for (let c = 0; c < 2 * (chunks + WARM_CHUNKS); c++) {
  const which = (c >> 1) % 2 === 0 ? c & 1 : 1 - (c & 1); // A B B A A B …
  const keys = Array.from({ length: CHUNK }, () => {
    const n = random.nextUint32() % FILLED_KEYS;
    return workload === 'missing' ? makeKey(n, KEY_BYTES - 1) : makeKey(n);
  });
  const start = performance.now();
  run(builds[which]!.db, keys);
  if (c >= 2 * WARM_CHUNKS) times[which]!.push(((performance.now() - start) * 1000) / CHUNK);
}
for (const { db, copy } of builds) {
  await db.close();
  rmSync(copy, { recursive: true, force: true });
}

const mean = (a: number[]): number => a.reduce((x, y) => x + y, 0) / a.length;
const median = (a: number[]): number => [...a].sort((x, y) => x - y)[a.length >> 1]!;
const [a, b] = times as [number[], number[]];
console.log(`${workload}, ${chunks} chunks of ${CHUNK} each, alternated (µs per operation, mean / median)`);
console.log(`  A ${buildA}: ${mean(a).toFixed(2)} / ${median(a).toFixed(2)}`);
console.log(`  B ${buildB}: ${mean(b).toFixed(2)} / ${median(b).toFixed(2)}`);
console.log(`  B ÷ A: ${(mean(b) / mean(a)).toFixed(3)} (mean), ${(median(b) / median(a)).toFixed(3)} (median)`);
