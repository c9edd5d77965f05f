/**
 * bench/reopen: DB.open of one database directory again and again — the WAL replay and what else
 * an open does — each time on a fresh copy, so every open replays the same WALs. For a
 * before/after comparison run it in two checkouts on the same directory.
 *
 *   npm run build && SK_KEEP=1 node dist/bench/batch-fill.js sync    # prints a directory to use
 *   node dist/bench/reopen.js DIR [rounds=6]
 *
 * Each round copies DIR to a temporary directory (untimed), opens it with default options (timed:
 * DB.open's promise), closes it (timed apart) and removes the copy. The first round is the
 * process's first open: the replay's code runs unoptimized, as at an application's start. A
 * directory bench/batch-fill keeps holds what the overwrite's close left: the WALs of the
 * memtable and of the flush the close abandoned (about 40,000 entries).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DB } from '../src/db.js';

const source = process.argv[2];
if (source === undefined) throw new Error('usage: node dist/bench/reopen.js DIR [rounds]');
const rounds = Number(process.argv[3] ?? 6);
let walBytes = 0;
for (const name of readdirSync(source)) if (name.endsWith('.log')) walBytes += statSync(join(source, name)).size;
console.log(`${source}: WALs ${(walBytes / 1e6).toFixed(1)} MB`);
for (let r = 0; r < rounds; r++) {
  const dir = mkdtempSync(join(tmpdir(), 'sievekv-reopen-'));
  cpSync(source, dir, { recursive: true });
  // The copy's pages are dirty: write them out first, or the open's fdatasyncs write the whole copy.
  execFileSync('sync');
  const start = performance.now();
  const db = await DB.open(dir);
  const openMs = performance.now() - start;
  const closeStart = performance.now();
  await db.close();
  console.log(`round ${r}: open ${openMs.toFixed(1)} ms  close ${(performance.now() - closeStart).toFixed(1)} ms`);
  rmSync(dir, { recursive: true, force: true });
}
