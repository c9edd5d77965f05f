/**
 * sievekv.stats' read times: `blockReadMicros` and `blockDecompressMicros` grow with the data
 * blocks the database's thread reads from its tables, and not with lookups the block cache or a
 * filter answers — so a slow read can be told apart: blocks read, cache hits, time reading, time
 * decompressing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { TIME_SAMPLE } from '../../src/sstable/table.js';
import { TableStats } from '../../src/sstable/table-stats.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const key = (i: number): string => `key-${String(i).padStart(6, '0')}`;
const N = 5000;

interface Stats {
  blocksRead: number;
  blockCacheHits: number;
  blockReadMicros: number;
  blockDecompressMicros: number;
}

describe('sievekv.stats read times', () => {
  it('counts the time of each data block read and decompressed, and none for cache hits or misses a filter answers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sievekv-read-times-'));
    dirs.push(dir);
    const db = await DB.open(dir);
    db.batchSync(Array.from({ length: N }, (_, i) => ({ type: 'put' as const, key: key(i), value: `value ${i} `.repeat(8) })));
    await db.compactRange();
    await db.close();

    const reader = await DB.open(dir);
    const stats = (): Stats => JSON.parse(reader.getProperty('sievekv.stats')!) as Stats;
    const before = stats();
    expect(before.blockReadMicros).toBe(0);
    expect(before.blockDecompressMicros).toBe(0);
    const start = performance.now();
    for (let i = 0; i < N; i += 7) expect(reader.getSync(key(i))?.toString()).toBe(`value ${i} `.repeat(8));
    const loopMicros = (performance.now() - start) * 1000;
    const first = stats();
    // An estimate: one read in TIME_SAMPLE is timed and counted TIME_SAMPLE times, so a pause
    // (a preemption, a collection) inside a timed read counts that many times over. Still bounded
    // by the loop's time so counted, which a mix-up of units or time counted for hits would break.
    expect(first.blockReadMicros + first.blockDecompressMicros).toBeLessThan(loopMicros * TIME_SAMPLE);
    expect(first.blocksRead).toBeGreaterThan(0);
    expect(first.blockReadMicros).toBeGreaterThan(0);
    expect(first.blockDecompressMicros).toBeGreaterThan(0);

    // The same keys again: every block is in the cache, no time is added.
    for (let i = 0; i < N; i += 7) reader.getSync(key(i));
    const again = stats();
    expect(again.blocksRead).toBe(first.blocksRead);
    expect(again.blockCacheHits).toBeGreaterThan(first.blockCacheHits);
    expect(again.blockReadMicros).toBe(first.blockReadMicros);
    expect(again.blockDecompressMicros).toBe(first.blockDecompressMicros);

    // Absent keys outside every table's range read no block either.
    for (let i = 0; i < 500; i++) expect(reader.getSync(`zzz-${i}`)).toBeUndefined();
    expect(stats().blockReadMicros).toBe(first.blockReadMicros);
    await reader.close();
  });

  it('TableStats adds and resets the times with the counters', () => {
    const a = new TableStats();
    const b = new TableStats();
    b.blockReadMicros = 2.5;
    b.blockDecompressMicros = 4;
    a.add(b);
    a.add(b);
    expect(a.blockReadMicros).toBe(5);
    expect(a.blockDecompressMicros).toBe(8);
    a.reset();
    expect(a.blockReadMicros).toBe(0);
    expect(a.blockDecompressMicros).toBe(0);
  });
});
