/**
 * Space after compaction (issue 5), scaled for `npm test`: fillrandom then overwrite of N keys
 * (16-byte keys, 100-byte values half compressible, as db_bench's), then compactRange. The SSTs
 * must take at most 1.2× the live data after compression — defined in bench/live-data-size.ts as
 * one table of exactly the live entries built with the same table options — and the data must sit
 * in one level holding one version per key and no deletion (the tables' properties say so).
 * bench/compaction.ts runs the full-size check (1,000,000 keys) on a real directory.
 */
import { describe, expect, it } from 'vitest';
import { levelContents, liveDataSize, type LiveEntry } from '../../bench/live-data-size.js';
import { DB } from '../../src/db.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { rng, testSeed } from '../support/seed.js';

const N = 50_000;

/** db_bench's value: `half` random printable bytes, repeated to 100 bytes (compresses to ~50%). */
function valueOf(next: () => number): Uint8Array {
  const v = new Uint8Array(100);
  for (let i = 0; i < 50; i++) v[i] = 32 + Math.floor(next() * 95);
  v.copyWithin(50, 0, 50);
  return v;
}

describe('space after fillrandom, overwrite and compactRange', () => {
  it(`${N} keys: SSTs ≤ 1.2× the live data after compression; one level, one version per key`, async () => {
    const fs = new MemFileSystem();
    // Smaller memtables, files and level 1 than the defaults, so that N keys span several levels.
    const options = { fs, writeBufferSize: 256 * 1024, maxFileSize: 256 * 1024, maxBytesForLevelBase: 1024 * 1024 };
    const next = rng(testSeed() ^ 0x59ace);
    const live = new Map<string, [number, Uint8Array]>();
    let seq = 0;
    const db = await DB.open('/db', options);
    try {
      for (let phase = 0; phase < 2; phase++) {
        // fillrandom, then overwrite: N writes of random keys from [0, N) each.
        for (let i = 0; i < N; i++) {
          const key = String(Math.floor(next() * N)).padStart(16, '0');
          const value = valueOf(next);
          await db.put(key, value);
          live.set(key, [++seq, value]);
        }
      }
      await db.compactRange();
      const stats = JSON.parse(db.getProperty('sievekv.stats')!) as { levels: { level: number; compactions: number }[] };
      expect(stats.levels.reduce((s, l) => s + l.compactions, 0)).toBeGreaterThan(5);
      // The content is intact (spot checks; the model tests check reads in depth).
      for (const [k, [, v]] of [...live].filter((_, i) => i % 997 === 0)) expect((await db.get(k))?.equals(v), k).toBe(true);
    } finally {
      await db.close();
    }

    const levels = levelContents(fs, '/db');
    expect(levels.length, JSON.stringify(levels)).toBe(1);
    const last = levels[0]!;
    expect(last.level).toBeGreaterThanOrEqual(1);
    expect(last.entries).toBe(live.size);
    expect(last.userKeys).toBe(live.size);
    expect(last.deletions).toBe(0);
    // Nothing else on disk: the SSTs the MANIFEST names are all there is.
    const onDisk = fs.list('/db').filter((n) => n.endsWith('.ldb')).reduce((s, n) => s + fs.readFile(`/db/${n}`).length, 0);
    expect(onDisk).toBe(last.bytes);

    const entries: LiveEntry[] = [...live].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, [s, v]]) => [Buffer.from(k), s, v]);
    const reference = liveDataSize(entries, options);
    const ratio = last.bytes / reference;
    console.log(
      `compaction-space: ${live.size} live keys of ${2 * N} writes; ${last.files} tables at level ${last.level}, ${last.bytes} bytes; ` +
        `live data after compression ${reference} bytes; ratio ${ratio.toFixed(3)}`,
    );
    expect(ratio).toBeLessThanOrEqual(1.2);
  });
});
