/**
 * bench/index-seek: seeks of tables' index blocks alone (Table.approximateOffsetOf: a seek of the
 * table's index block, its restart windows built, and the block handle found decoded), each target
 * a lookup key inside the table it is sought in.
 *
 *   npm run build && node dist/bench/index-seek.js [DIR]
 *
 * DIR (default: a fresh temporary directory) is filled first if it holds no database
 * (bench/filled-db.ts); a copy of it is compacted (compactRange), so every key lies in one
 * table of level 2. Prints µs per seek for each round, 1,000,000 seeks a round (200,000 keys,
 * five times); the first round warms up.
 */
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DB } from '../src/db.js';
import { writeInternalKey, VALUE_TYPE_FOR_SEEK } from '../src/format/internal-key.js';
import { NodeFileSystem } from '../src/fs/node-fs.js';
import { Table } from '../src/sstable/table.js';
import { makeKey } from './db/workloads.js';
import { FILLED_KEYS, filledDatabase } from './filled-db.js';

const ROUNDS = 4;
const KEYS = 200_000;
const given = process.argv[2];
const source = await filledDatabase(given);
const dir = mkdtempSync(join(tmpdir(), 'sievekv-index-seek-'));
cpSync(source, dir, { recursive: true });
const db = await DB.open(dir);
await db.compactRange();
await db.close();

const fs = new NodeFileSystem();
const tables = readdirSync(dir)
  .filter((f) => f.endsWith('.ldb'))
  .map((f) => Table.open(fs, join(dir, f)));
// Each table's smallest user key, to find the table a key lies in.
const firstKeys = tables.map((t) => {
  const index = t.newIterator();
  index.seekToFirst();
  const first = Buffer.from(index.key().subarray(0, index.key().length - 8));
  index.close();
  return first;
});
const targets: Uint8Array[] = [];
const owners: Table[] = [];
for (let i = 0; i < KEYS; i++) {
  const user = makeKey((i * 7919 + 13) % FILLED_KEYS);
  let owner = -1;
  for (let j = 0; j < tables.length; j++) {
    if (Buffer.compare(firstKeys[j]!, user) <= 0 && (owner < 0 || Buffer.compare(firstKeys[j]!, firstKeys[owner]!) > 0)) owner = j;
  }
  if (owner < 0) continue;
  const target = new Uint8Array(user.length + 8);
  writeInternalKey(target, 0, user, Number.MAX_SAFE_INTEGER, VALUE_TYPE_FOR_SEEK);
  targets.push(target);
  owners.push(tables[owner]!);
}

for (let round = 0; round < ROUNDS; round++) {
  let offsets = 0;
  const start = performance.now();
  for (let r = 0; r < 5; r++) {
    for (let i = 0; i < targets.length; i++) offsets += owners[i]!.approximateOffsetOf(targets[i]!);
  }
  const us = ((performance.now() - start) * 1000) / (5 * targets.length);
  console.log(`round ${round + 1}${round === 0 ? ' (warm-up)' : ''}: ${us.toFixed(3)} µs per index seek (${tables.length} tables; offsets sum ${offsets})`);
}
for (const t of tables) t.close();
rmSync(dir, { recursive: true, force: true });
if (given === undefined) rmSync(source, { recursive: true, force: true });
