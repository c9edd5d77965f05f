/**
 * Stall counters (LevelDB's "stall" figures): `sievekv.stats` reports how long, and how often,
 * writers waited and why — a full memtable waiting for its flush, level 0 at the slowdown or the
 * stop trigger waiting for compaction. Real files, so flushes and merges run on worker threads
 * and writers really do wait.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';

const root = mkdtempSync(join(tmpdir(), 'sievekv-stalls-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

it('writers that wait for flushes and compactions are counted, with the microseconds they waited', async () => {
  const db = await DB.open(join(root, 'db'), {
    writeBufferSize: 8 * 1024,
    l0CompactionTrigger: 1,
    l0SlowdownTrigger: 1,
    l0StopTrigger: 2,
    compression: 'none',
  });
  const value = Buffer.alloc(200, 1);
  const fresh = JSON.parse(db.getProperty('sievekv.stats')!);
  expect(fresh.stallsMemtableFull + fresh.stallsL0Slowdown + fresh.stallsL0Stop).toBe(0);
  // Overwrites of a small key space: every memtable holds several versions of a key, so its
  // table is merged (not moved) out of level 0, and writers meet the triggers.
  for (let round = 0; round < 60; round++) {
    const ops = Array.from({ length: 40 }, (_, i) => ({ type: 'put' as const, key: `k${i % 97}`, value }));
    await db.batch(ops);
    db.batchSync(ops.slice(0, 10));
  }
  const stats = JSON.parse(db.getProperty('sievekv.stats')!);
  const waits = stats.stallsMemtableFull + stats.stallsL0Slowdown + stats.stallsL0Stop;
  console.log(`stalls: memtable full ${stats.stallsMemtableFull} (${stats.stallMicrosMemtableFull} µs), L0 slowdown ${stats.stallsL0Slowdown} (${stats.stallMicrosL0Slowdown} µs), L0 stop ${stats.stallsL0Stop} (${stats.stallMicrosL0Stop} µs)`);
  expect(waits).toBeGreaterThan(0);
  expect(stats.stallMicrosMemtableFull + stats.stallMicrosL0Slowdown + stats.stallMicrosL0Stop).toBeGreaterThan(0);
  for (const reason of ['MemtableFull', 'L0Slowdown', 'L0Stop']) {
    if (stats[`stalls${reason}`] === 0) expect(stats[`stallMicros${reason}`]).toBe(0);
  }
  for (let i = 0; i < 40; i++) expect(db.getSync(`k${i}`)?.length).toBe(200);
  await db.close();
});

it('synchronous writers at l0SlowdownTrigger sleep 1 ms per 64 KiB written, counted as an L0 slowdown', async () => {
  // In memory, jobs run on this thread, deferred to the event loop — except a flush a sync writer
  // waits for. Writing synchronously, level 0 grows by a table per memtable and the merge it
  // triggers never gets to run: level 0 stays at its slowdown trigger while the writes go on.
  const db = await DB.open('/slow', {
    fs: new MemFileSystem(),
    writeBufferSize: 4 * 1024,
    l0CompactionTrigger: 2,
    l0SlowdownTrigger: 2,
    l0StopTrigger: 100,
    compression: 'none',
  });
  const value = Buffer.alloc(500, 2);
  for (let i = 0; Number(db.getProperty('sievekv.num-files-at-level0')) < 2; i++) db.putSync(`fill${i}`, value);
  const stats = (): { stallsL0Slowdown: number; stallMicrosL0Slowdown: number } => JSON.parse(db.getProperty('sievekv.stats')!);
  // Small writes: 200 puts of a few bytes stay far below 64 KiB, so at most one sleep (the bytes
  // the fill loop wrote at the trigger count too) — not one per put.
  const before = stats();
  for (let n = 0; n < 200; n++) db.putSync(`small${n}`, 'v');
  expect(stats().stallsL0Slowdown - before.stallsL0Slowdown).toBeLessThanOrEqual(1);
  // Large writes: each over 64 KiB, each worth one sleep.
  const big = Buffer.alloc(70 * 1024, 3);
  const mid = stats();
  // A write's bytes count toward the next write's sleep: 6 large writes, then a small one, sleep
  // before each of the last 6.
  for (let n = 0; n < 5; n++) db.putSync(`big${n}`, big);
  db.batchSync([{ type: 'put', key: 'bigbatch', value: big }]);
  db.putSync('last', 'v');
  const after = stats();
  expect(Number(db.getProperty('sievekv.num-files-at-level0'))).toBeGreaterThanOrEqual(2);
  expect(after.stallsL0Slowdown - mid.stallsL0Slowdown).toBe(6);
  expect(after.stallMicrosL0Slowdown - mid.stallMicrosL0Slowdown).toBeGreaterThanOrEqual(6 * 900);
  expect(db.getSync('small199')?.toString()).toBe('v');
  expect(db.getSync('big4')?.length).toBe(big.length);
  await db.close();
});
