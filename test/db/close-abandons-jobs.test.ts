/**
 * Issue 10: close() does not wait for background work. A merge or flush still running when the
 * database closes is abandoned (LevelDB's shutting_down_): the job stops at its next look at its
 * runner's stop flag, removes the tables it wrote, and nothing of it is installed — the merge's
 * inputs stay live, the flush's WAL stays for the next open to replay. Closing is not an error:
 * nothing is latched, and the database reopens with every key.
 *
 * On real files the merge runs on its worker thread and is stopped mid-way; on MemFileSystem jobs
 * run on the database's thread, so a job still waiting for its turn is what the close abandons.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DB, type OpenOptions } from '../../src/db.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import type { FileSystem } from '../../src/fs/file-system.js';

const root = mkdtempSync(join(tmpdir(), 'sievekv-close-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const keyOf = (i: number): string => `key-${String((i * 7919) % 1_000_003).padStart(8, '0')}-${i}`;
const valueOf = (i: number): string => `value-${i}-`.padEnd(100, String.fromCharCode(97 + (i % 26)));
/** No compaction while the tables are written: level 0 fills up for the merge after the reopen. */
const NO_COMPACTION = { l0CompactionTrigger: 100, l0SlowdownTrigger: 100, l0StopTrigger: 100 } as const;
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Writes keys [0, n) in batches, then flushes the memtable (a compactRange of an empty range). */
async function fill(db: DB, n: number): Promise<void> {
  for (let i = 0; i < n; i += 500) {
    db.batchSync(Array.from({ length: Math.min(500, n - i) }, (_, j) => ({ type: 'put' as const, key: keyOf(i + j), value: valueOf(i + j) })));
  }
  await db.compactRange('~', '~');
}

async function expectEveryKey(dir: string, n: number, options: OpenOptions): Promise<void> {
  const db = await DB.open(dir, options);
  try {
    let count = 0;
    for await (const [k] of db.iterator()) {
      count++;
      expect(k.toString()).toMatch(/^key-/);
    }
    expect(count).toBe(n);
    for (let i = 0; i < n; i += 97) expect(db.getSync(keyOf(i))?.toString()).toBe(valueOf(i));
  } finally {
    await db.close();
  }
}

const tables = (names: string[]): string[] => names.filter((n) => n.endsWith('.ldb')).sort();

describe('close abandons the background work it finds running', () => {
  it('a long merge on the worker: close returns without installing it, removes its outputs, and every key is there after a reopen', async () => {
    const dir = join(root, 'merge');
    const options: OpenOptions = { writeBufferSize: 512 * 1024, compression: 'none' };
    const n = 60_000;
    let db = await DB.open(dir, { ...options, ...NO_COMPACTION });
    await fill(db, n);
    await db.close();
    const before = tables(readdirSync(dir));
    expect(before.length).toBeGreaterThanOrEqual(8);

    // Reopened with the default triggers, the next turn starts a merge of all of level 0
    // (megabytes: a worker takes a good part of a second over it).
    db = await DB.open(dir, options);
    expect(db.getProperty('sievekv.num-files-at-level0')).toBe(String(before.length));
    const log = (): string => readFileSync(join(dir, 'LOG'), 'utf8');
    while (!/ compacting region 0: \d+@0/.test(log())) await nextTurn();
    await db.close();

    expect(log()).toMatch(/compaction of region 0 level 0 abandoned: the database is closing/);
    expect(log()).not.toMatch(/ compacted region 0/);
    expect(tables(readdirSync(dir))).toEqual(before); // its outputs removed, its inputs kept
    db = await DB.open(dir, options);
    expect(db.getProperty('sievekv.num-files-at-level0')).toBe(String(before.length)); // nothing was installed
    await db.close();
    await expectEveryKey(dir, n, options);
  }, 120_000);

  it('a merge waiting for its turn (jobs on this thread) is abandoned before it begins', async () => {
    const fs = new MemFileSystem();
    const options: OpenOptions = { fs, writeBufferSize: 16 * 1024, compression: 'none' };
    const n = 3000;
    let db = await DB.open('/db', { ...options, ...NO_COMPACTION });
    await fill(db, n);
    await db.close();
    const before = tables(fs.list('/db'));
    expect(before.length).toBeGreaterThanOrEqual(4);

    db = await DB.open('/db', options);
    const log = (): string => Buffer.from(fs.readFile('/db/LOG')).toString();
    // Once the merge is picked, its job waits for the next turn of the event loop.
    while (!/ compacting region 0: \d+@0/.test(log())) await nextTurn();
    await db.close();
    expect(log()).toMatch(/compaction of region 0 level 0 abandoned: the database is closing/);
    expect(tables(fs.list('/db'))).toEqual(before);
    await expectEveryKey('/db', n, options);
  });

  it('a flush waiting for its turn is abandoned: its WAL stays live and the reopen replays it', async () => {
    const fs = new MemFileSystem();
    const options: OpenOptions = { fs, writeBufferSize: 8 * 1024 };
    const db = await DB.open('/db', options);
    const n = 200;
    // Synchronous writes: the memtable fills and switches, and its flush is still queued at close.
    for (let i = 0; i < n; i++) db.putSync(keyOf(i), valueOf(i));
    await db.close();
    const log = Buffer.from(fs.readFile('/db/LOG')).toString();
    expect(log).toMatch(/flush to tables \d+ discarded: the database is closing/);
    expect(log).not.toMatch(/background error/);
    expect(walCount(fs)).toBeGreaterThanOrEqual(2); // the abandoned memtable's WAL and the live one
    await expectEveryKey('/db', n, options);
  });
});

function walCount(fs: FileSystem): number {
  return fs.list('/db').filter((name) => name.endsWith('.log')).length;
}
