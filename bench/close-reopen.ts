/**
 * bench/close-reopen: close() and the DB.open that follows it at once, as bench/db times them after
 * overwrite, but many times in one process, on a copy of one database — the before/after figure
 * for a change to close, the memtable image or the open (run it in two checkouts, alternated).
 *
 *   npm run build && node dist/bench/close-reopen.js DIR [cycles=8] [puts=30000]
 *
 * DIR is filled first if it holds no database (bench/filled-db.ts); a copy of it is used. Each cycle
 * opens the copy, makes `puts` seeded random putSyncs of db_bench entries (a memtable for close to
 * leave as an image, and merges running when it closes), then times close() and the open right
 * after it, and closes that one untimed. The first two cycles warm the code up and are left out.
 * Prints each timed cycle and the mean and largest close and reopen.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DB } from '../src/db.js';
import { makeKey, makeValues } from './db/workloads.js';
import { FILLED_KEYS, filledDatabase } from './filled-db.js';
import { SeededRandom } from './seeded-keys.js';

const WARM_UP_CYCLES = 2;
const source = await filledDatabase(process.argv[2]);
const cycles = Number(process.argv[3] ?? 8);
const puts = Number(process.argv[4] ?? 30_000);
const dir = mkdtempSync(join(tmpdir(), 'sievekv-close-reopen-'));
cpSync(source, dir, { recursive: true });
const values = makeValues(3);
const random = new SeededRandom(11);
const closes: number[] = [];
const reopens: number[] = [];
try {
  for (let cycle = 0; cycle < cycles; cycle++) {
    let db = await DB.open(dir);
    for (let i = 0; i < puts; i++) db.putSync(makeKey(random.nextUint32() % FILLED_KEYS), values[i % values.length]!);
    const closing = performance.now();
    await db.close();
    const closed = performance.now();
    db = await DB.open(dir);
    const opened = performance.now();
    await db.close();
    if (cycle < WARM_UP_CYCLES) continue;
    closes.push(closed - closing);
    reopens.push(opened - closed);
    console.log(`cycle ${cycle}: close ${(closed - closing).toFixed(1)} ms, reopen ${(opened - closed).toFixed(1)} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200)); // the last close's worker goes first
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const mean = (xs: number[]): string => (xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(1);
console.log(`close: mean ${mean(closes)} ms, largest ${Math.max(...closes).toFixed(1)} ms; reopen: mean ${mean(reopens)} ms, largest ${Math.max(...reopens).toFixed(1)} ms`);
