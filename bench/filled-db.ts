/**
 * A 1M-key database for the read benchmarks run by hand (bench/scan-copy.ts,
 * bench/random-gets.ts): db_bench keys 0..N−1 put one by one in a seeded random order with
 * db_bench's values, then closed (no compactRange). Reused if the directory holds one already.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DB } from '../src/db.js';
import { makeKey, makeValues } from './db/workloads.js';
import { SeededRandom } from './seeded-keys.js';

export const FILLED_KEYS = 1_000_000;

/** `dir` (a fresh temporary directory when undefined), holding the filled database. */
export async function filledDatabase(dir?: string): Promise<string> {
  const at = dir ?? mkdtempSync(join(tmpdir(), 'sievekv-filled-'));
  if (existsSync(join(at, 'CURRENT'))) return at;
  const values = makeValues(7);
  const random = new SeededRandom(12345);
  const order = new Uint32Array(FILLED_KEYS);
  for (let i = 0; i < FILLED_KEYS; i++) order[i] = i;
  for (let i = FILLED_KEYS - 1; i > 0; i--) {
    const j = random.nextUint32() % (i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const db = await DB.open(at);
  for (let i = 0; i < FILLED_KEYS; i++) db.putSync(makeKey(order[i]!), values[i % values.length]!);
  await db.close();
  return at;
}
