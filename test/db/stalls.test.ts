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
