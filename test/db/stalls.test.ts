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

it('a synchronous writer at l0SlowdownTrigger sleeps 1 ms per write, counted as an L0 slowdown', async () => {
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
  const before = JSON.parse(db.getProperty('sievekv.stats')!);
  for (let n = 0; n < 5; n++) db.putSync(`slow${n}`, 'v');
  db.batchSync([{ type: 'put', key: 'slowbatch', value: 'v' }]);
  const after = JSON.parse(db.getProperty('sievekv.stats')!);
  expect(Number(db.getProperty('sievekv.num-files-at-level0'))).toBeGreaterThanOrEqual(2);
  expect(after.stallsL0Slowdown - before.stallsL0Slowdown).toBe(6);
  expect(after.stallMicrosL0Slowdown - before.stallMicrosL0Slowdown).toBeGreaterThanOrEqual(6 * 900);
  expect(db.getSync('slow4')?.toString()).toBe('v');
  await db.close();
});
