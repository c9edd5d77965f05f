/**
 * bench/batch-memory: the peak resident memory one large `db.batch` costs, above the operations the
 * caller built (README, option maxBatchSize: "plan for ~5× its size at peak", the operations
 * included). The values share one buffer, so the operations themselves cost next to nothing.
 *
 *   npx tsx bench/batch-memory.ts [MiB=60]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DB } from '../src/db.js';

const mib = Number(process.argv[2] ?? 60);
const dir = mkdtempSync(join(tmpdir(), 'sievekv-batch-memory-'));
const db = await DB.open(dir);
const value = Buffer.alloc(100 * 1024, 1);
const ops = Array.from({ length: Math.round((mib * 1024) / 100) }, (_, i) => ({ type: 'put' as const, key: `k${i}`, value }));
const before = process.memoryUsage().rss;
let peak = before;
const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2);
await db.batch(ops, { sync: true });
peak = Math.max(peak, process.memoryUsage().rss);
clearInterval(timer);
const grew = (peak - before) / 2 ** 20;
console.log(`a ${mib} MiB batch: peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB, ${grew.toFixed(0)} MiB above the operations (${(grew / mib).toFixed(1)}× the batch)`);
await db.close();
rmSync(dir, { recursive: true, force: true });
