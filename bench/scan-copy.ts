/**
 * bench/scan-copy: a full `for…of` scan with copied entries against one with views
 * (`copy: false`), alternated, on one database.
 *
 *   npm run build && node dist/bench/scan-copy.js [DIR]
 *
 * DIR (default: a fresh temporary directory) is filled first if it holds no database
 * (bench/filled-db.ts). Prints µs per entry for each round; the first round warms up.
 */
import { rmSync } from 'node:fs';
import { DB } from '../src/db.js';
import { filledDatabase } from './filled-db.js';

const ROUNDS = 4;
const given = process.argv[2];
const dir = await filledDatabase(given);

const db = await DB.open(dir);
for (let round = 0; round < ROUNDS; round++) {
  const line: string[] = [];
  for (const copy of [true, false]) {
    const start = performance.now();
    let n = 0;
    for (const entry of db.iterator({ copy })) if (entry[0].length > 0) n++;
    line.push(`copy ${String(copy).padEnd(5)} ${(((performance.now() - start) * 1000) / n).toFixed(3)} µs/entry`);
  }
  console.log(`round ${round + 1}${round === 0 ? ' (warm-up)' : ''}: ${line.join('   ')}`);
}
await db.close();
if (given === undefined) rmSync(dir, { recursive: true, force: true });
