/**
 * bench/random-gets: random `getSync`s of present keys on one database, with options alternated
 * (each in its own process run, one after the other, several rounds): the A/B of a read-path
 * option such as tableFileCacheSize.
 *
 *   npm run build && node dist/bench/random-gets.js DIR ['{"tableFileCacheSize": 67108864}'] ...
 *
 * DIR is filled first if it holds no database (bench/filled-db.ts). Each options JSON (default:
 * `{}`) opens a copy of DIR, waits until level 0 has fewer than 4 files, then times R = 250,000
 * seeded random gets. Prints µs per get (wall and this process's CPU, workers included) and the
 * block reads, from the file and from memory.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DB, type OpenOptions } from '../src/db.js';
import { makeKey } from './db/workloads.js';
import { FILLED_KEYS, filledDatabase } from './filled-db.js';
import { SeededRandom } from './seeded-keys.js';

const R = 250_000;
const ROUNDS = 3;
const source = await filledDatabase(process.argv[2]);
const variants = (process.argv.length > 3 ? process.argv.slice(3) : ['{}']).map((s) => JSON.parse(s) as OpenOptions);

for (let round = 1; round <= ROUNDS; round++) {
  for (const options of variants) {
    const copy = mkdtempSync(join(tmpdir(), 'sievekv-random-gets-'));
    cpSync(source, copy, { recursive: true });
    const db = await DB.open(copy, options);
    for (let i = 0; i < 200 && Number(db.getProperty('sievekv.num-files-at-level0')) >= 4; i++) await new Promise((r) => setTimeout(r, 50));
    const random = new SeededRandom(round);
    const keys = Array.from({ length: R }, () => makeKey(random.nextUint32() % FILLED_KEYS));
    const cpu = process.cpuUsage();
    const start = performance.now();
    for (const key of keys) if (db.getSync(key) === undefined) throw new Error(`missing ${key}`);
    const wall = ((performance.now() - start) * 1000) / R;
    const used = process.cpuUsage(cpu);
    const s = JSON.parse(db.getProperty('sievekv.stats')!) as { blocksRead: number; blocksReadFromMemory: number };
    console.log(
      `round ${round} ${JSON.stringify(options)}: ${wall.toFixed(2)} µs/get, cpu ${((used.user + used.system) / R).toFixed(2)} µs/get, ` +
        `blocks read ${s.blocksRead} (${s.blocksReadFromMemory} from memory)`,
    );
    await db.close();
    rmSync(copy, { recursive: true, force: true });
  }
}
