/**
 * Made test/fixtures/sievekv-lz4-leveldb-footer/ (not a test; run by hand, once): a small
 * database written by sievekv before LZ4 tables got RocksDB's footer (commit f5b0322), so its
 * LZ4 tables end in LevelDB's 48-byte footer and frame LZ4 blocks with a varint32 length. The
 * tests check that sievekv still reads such tables exactly (test/interop/legacy-lz4.test.ts).
 *
 * It was run in a worktree of that commit, so that `../../src` is the old code:
 *
 *   git worktree add /tmp/old f5b0322 && ln -s "$PWD/node_modules" /tmp/old/node_modules
 *   cp test/interop/make-legacy-lz4-fixture.ts /tmp/old/test/interop/
 *   (cd /tmp/old && npx tsx test/interop/make-legacy-lz4-fixture.ts "$OLDPWD/test/fixtures/sievekv-lz4-leveldb-footer")
 *
 * Contents (fixed seed): tables on levels 0 and 1 or deeper with deletions and overwrites, and
 * a WAL tail; `expected.jsonl` and `deleted.jsonl` as for the LevelDB fixtures.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DB } from '../../src/db.js';

const dir = process.argv[2];
if (dir === undefined) throw new Error('usage: make-legacy-lz4-fixture.ts DIR');
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });

let state = 0x1e9ac7;
const next = (): number => {
  state = (Math.imul(state, 1103515245) + 12345) >>> 0;
  return state / 2 ** 32;
};
const model = new Map<string, string>();
const deleted = new Set<string>();
const db = await DB.open(dir, { compression: 'lz4', writeBufferSize: 16 * 1024, maxFileSize: 16 * 1024 });
const round = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) {
    const key = Buffer.from(`key-${String(Math.floor(next() * 1500)).padStart(5, '0')}`);
    const k = key.toString('hex');
    if (next() < 0.12) {
      await db.del(key);
      model.delete(k);
      deleted.add(k);
    } else {
      const value = Buffer.from(`v${i} `.repeat(1 + Math.floor(next() * 8)));
      await db.put(key, value);
      model.set(k, value.toString('hex'));
      deleted.delete(k);
    }
  }
};
await round(2500);
await db.compactRange(); // deeper levels
await round(1200); // level-0 tables
await round(60); // left in the WAL
await db.close();
rmSync(join(dir, 'LOG'), { force: true });
const sorted = [...model.entries()].sort((a, b) => Buffer.compare(Buffer.from(a[0], 'hex'), Buffer.from(b[0], 'hex')));
writeFileSync(join(dir, 'expected.jsonl'), sorted.map(([key, value]) => JSON.stringify({ key, value })).join('\n') + '\n');
writeFileSync(join(dir, 'deleted.jsonl'), [...deleted].sort().map((key) => JSON.stringify({ key })).join('\n') + '\n');
