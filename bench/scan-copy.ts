/**
 * bench/scan-copy: a full `for…of` scan with copied entries against one with views
 * (`copy: false`), alternated, on one database.
 *
 *   npm run build && node dist/bench/scan-copy.js [DIR]
 *
 * DIR (default: a fresh temporary directory) is filled first if it holds no database: N =
 * 1,000,000 db_bench keys in a seeded random order, db_bench's values, then closed and reopened
 * (no compactRange). Prints µs per entry for each round; the first round warms up.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DB } from '../src/db.js';
import { makeKey, makeValues } from './db/workloads.js';

const N = 1_000_000;
const ROUNDS = 4;
const given = process.argv[2];
const dir = given ?? mkdtempSync(join(tmpdir(), 'sievekv-scan-copy-'));

if (!existsSync(join(dir, 'CURRENT'))) {
  const values = makeValues(7);
  let state = 12345;
  const random = (): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return state >>> 0;
  };
  const order = new Uint32Array(N);
  for (let i = 0; i < N; i++) order[i] = i;
  for (let i = N - 1; i > 0; i--) {
    const j = random() % (i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const db = await DB.open(dir);
  for (let i = 0; i < N; i++) db.putSync(makeKey(order[i]!), values[i % values.length]!);
  await db.close();
}

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
