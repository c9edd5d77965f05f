/**
 * bench/read-loops: the read loops of issue 11 on one database, sievekv alone, for before/after
 * figures of a read-path change (run it in two checkouts on the same directory):
 *
 *   npm run build && node dist/bench/read-loops.js DIR [rounds=3]
 *
 * DIR is filled first if it holds no database (bench/filled-db.ts). Each round opens a fresh copy
 * of DIR, waits 5 s (the open's flush and merges), then times, on that copy:
 *   - getSync: 250,000 seeded random present keys (µs per get; blocks read and block cache hits
 *     per get; user and system CPU of the process per get);
 *   - seek: 100,000 × (new iterator, seek a random key, nextSync, close), as bench/db's seekrandom;
 *   - forward and reverse: one `for…of` over every entry.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DB } from '../src/db.js';
import { makeKey } from './db/workloads.js';
import { FILLED_KEYS, filledDatabase } from './filled-db.js';
import { SeededRandom } from './seeded-keys.js';

const GETS = 250_000;
const SEEKS = 100_000;
const source = await filledDatabase(process.argv[2]);
const rounds = Number(process.argv[3] ?? 3);

interface Counters {
  blocksRead: number;
  blockCacheHits: number;
}
const counters = (db: DB): Counters => JSON.parse(db.getProperty('sievekv.stats')!) as Counters;

for (let round = 1; round <= rounds; round++) {
  const copy = mkdtempSync(join(tmpdir(), 'sievekv-read-loops-'));
  cpSync(source, copy, { recursive: true });
  const db = await DB.open(copy);
  await new Promise((resolve) => setTimeout(resolve, 5000));
  const random = new SeededRandom(round);
  const keys = Array.from({ length: GETS }, () => makeKey(random.nextUint32() % FILLED_KEYS));

  let before = counters(db);
  let cpu = process.cpuUsage();
  let start = performance.now();
  for (const key of keys) if (db.getSync(key) === undefined) throw new Error(`missing ${key.toString()}`);
  const getUs = ((performance.now() - start) * 1000) / GETS;
  const getCpu = process.cpuUsage(cpu);
  let after = counters(db);
  const perGet = (n: number): string => (n / GETS).toFixed(2);
  console.log(
    `round ${round} getSync ${getUs.toFixed(2)} µs (user ${(getCpu.user / GETS).toFixed(2)}, system ${(getCpu.system / GETS).toFixed(2)} µs), ` +
      `blocks read ${perGet(after.blocksRead - before.blocksRead)}, cache hits ${perGet(after.blockCacheHits - before.blockCacheHits)} per get`,
  );

  before = after;
  start = performance.now();
  for (let i = 0; i < SEEKS; i++) {
    const it = db.iterator();
    try {
      it.seek(keys[i]!);
      if (it.nextSync() === undefined) throw new Error('seek found nothing');
    } finally {
      it.close();
    }
  }
  const seekUs = ((performance.now() - start) * 1000) / SEEKS;
  after = counters(db);
  console.log(`round ${round} seek ${seekUs.toFixed(2)} µs, blocks read ${((after.blocksRead - before.blocksRead) / SEEKS).toFixed(2)} per seek`);

  for (const reverse of [false, true]) {
    start = performance.now();
    let n = 0;
    for (const entry of db.iterator({ reverse })) if (entry[0].length > 0) n++;
    if (n !== FILLED_KEYS) throw new Error(`scanned ${n} entries`);
    console.log(`round ${round} ${reverse ? 'reverse' : 'forward'} ${(((performance.now() - start) * 1000) / n).toFixed(3)} µs per entry`);
  }
  await db.close();
  rmSync(copy, { recursive: true, force: true });
}
