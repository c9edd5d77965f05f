/**
 * Issue 10: a write at l0StopTrigger level-0 files waits until compaction takes level 0 below the
 * trigger — starting a merge itself if none runs — not only while a merge happens to run (LevelDB:
 * "Too many L0 files; waiting…" until the count drops). A database reopened with level 0 past its
 * stop is such a moment: the open schedules its first compaction for the next turn of the event
 * loop, and a writer may come first.
 *
 * MemFileSystem: merges run on the database's thread (a synchronous writer runs the merge itself,
 * blocking; an asynchronous one awaits it).
 */
import { describe, expect, it } from 'vitest';
import { DB, type OpenOptions } from '../../src/db.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';

const FILES = 6;
const TRIGGERS = { l0CompactionTrigger: 2, l0SlowdownTrigger: 3, l0StopTrigger: 4 } as const;
const keyOf = (i: number): string => `key-${String(i).padStart(5, '0')}`;
const level0 = (db: DB): number => Number(db.getProperty('sievekv.num-files-at-level0'));
const stopStalls = (db: DB): number => JSON.parse(db.getProperty('sievekv.stats')!).stallsL0Stop as number;

/** A database whose level 0 holds FILES tables, each over the whole key range (so they merge). */
async function deepLevel0(): Promise<{ fs: MemFileSystem; options: OpenOptions }> {
  const fs = new MemFileSystem();
  const options: OpenOptions = { fs, writeBufferSize: 8 * 1024, compression: 'none' };
  const db = await DB.open('/db', { ...options, l0CompactionTrigger: 100, l0SlowdownTrigger: 100, l0StopTrigger: 100 });
  for (let f = 0; f < FILES; f++) {
    db.batchSync(Array.from({ length: 40 }, (_, i) => ({ type: 'put' as const, key: keyOf(i * FILES + f), value: `v${f}` })));
    await db.compactRange('~', '~'); // flushes; nothing overlaps '~'
  }
  expect(level0(db)).toBe(FILES);
  await db.close();
  return { fs, options: { ...options, ...TRIGGERS } };
}

async function expectAllKeys(db: DB): Promise<void> {
  for (let i = 0; i < 40 * FILES; i++) expect(db.getSync(keyOf(i))?.toString()).toBe(`v${i % FILES}`);
}

describe('writes at l0StopTrigger wait until level 0 is below it', () => {
  it('a synchronous writer that needs a memtable switch runs merges until level 0 is below the stop', async () => {
    const { options } = await deepLevel0();
    const db = await DB.open('/db', options);
    expect(level0(db)).toBe(FILES); // past the stop, and no merge runs yet
    db.putSync('big', 'x'.repeat(9 * 1024)); // fills the memtable (a write that fits never waits)
    db.putSync('after', '1'); // needs a switch: at the stop, it waits
    expect(level0(db)).toBeLessThan(options.l0StopTrigger!);
    expect(stopStalls(db)).toBeGreaterThan(0);
    await expectAllKeys(db);
    expect(db.getSync('after')?.toString()).toBe('1');
    await db.close();
  });

  it('an asynchronous writer waits too, and resolves once level 0 is below the stop', async () => {
    const { options } = await deepLevel0();
    const db = await DB.open('/db', options);
    expect(level0(db)).toBe(FILES);
    await db.put('after', '1');
    expect(level0(db)).toBeLessThan(options.l0StopTrigger!);
    expect(stopStalls(db)).toBeGreaterThan(0);
    await expectAllKeys(db);
    await db.close();
  });
});
