/**
 * bench/write-path: the cost of the write path itself — the writer queue, the WAL append and the
 * memtable insert, no flush (a 512 MiB memtable) and no fsync — through each entry point: putSync,
 * put, batchSync and batch (1,000 puts each), 300,000 random 16-byte keys, 100-byte values.
 * For a before/after comparison run it in two checkouts (git worktree) one after the other.
 *
 *   npx tsx bench/write-path.ts [putSync|put|batchSync|batch] [SRC_ROOT=.]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [workload = 'put', root = '.'] = process.argv.slice(2);
const { DB } = (await import(pathToFileURL(join(resolve(root), 'src/db.ts')).href)) as typeof import('../src/db.js');
const dir = mkdtempSync(join(tmpdir(), 'sievekv-write-path-'));
const db = await DB.open(dir, { writeBufferSize: 512 * 1024 * 1024 });
const N = 300_000;
const keys = Array.from({ length: N }, (_, i) => Buffer.from(String((i * 2654435761) >>> 0).padStart(16, '0')));
const value = Buffer.alloc(100, 7);
const batchOf = (i: number) => keys.slice(i, i + 1000).map((key) => ({ type: 'put' as const, key, value }));
const start = process.hrtime.bigint();
if (workload === 'putSync') for (const k of keys) db.putSync(k, value);
else if (workload === 'put') for (const k of keys) await db.put(k, value);
else if (workload === 'batchSync') for (let i = 0; i < N; i += 1000) db.batchSync(batchOf(i));
else if (workload === 'batch') for (let i = 0; i < N; i += 1000) await db.batch(batchOf(i));
else throw new Error(`unknown workload ${workload}`);
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
console.log(`${workload}: ${Math.round(N / seconds)} puts/s`);
await db.close();
rmSync(dir, { recursive: true, force: true });
