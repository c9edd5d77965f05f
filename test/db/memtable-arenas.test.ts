/**
 * Memtable arenas are recycled (memtable/arena-pool.ts): a flushed memtable's arena becomes a new
 * memtable's. An iterator opened before the flush still reads the old memtable, so its arena must
 * not be reused until the iterator closes. These write many memtables' worth behind an open
 * iterator, with the in-memory file system (flushes on this thread) and with the real one (a
 * worker, which reads each flushed memtable's shared arena in place), and check the iterator
 * still sees exactly what the database held when it was opened.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { storageBytes } from '../../src/memtable/skiplist.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const key = (n: number): string => `key${String(n).padStart(5, '0')}`;

/** Writes `before`, opens an iterator, overwrites every key `rounds` times (many flushes), then reads the iterator. */
async function readBehindFlushes(db: DB, before: [number, string][], rounds: number): Promise<{ seen: string[]; expected: string[] }> {
  const model = new Map<string, string>();
  for (const [k, v] of before) {
    db.putSync(key(k), v);
    model.set(key(k), v);
  }
  const expected = [...model].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${k}=${v}`);
  const it = db.iterator();
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < 300; k++) db.putSync(key(k), `round ${r} ${'x'.repeat(40)}`);
    await new Promise((resolve) => setImmediate(resolve)); // flushes install
  }
  const seen: string[] = [];
  for (const [k, v] of it) seen.push(`${k}=${v}`);
  return { seen, expected };
}

describe('recycled memtable arenas', () => {
  it('an iterator opened before many flushes reads what it was opened on (in-memory file system)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.nat({ max: 299 }), fc.string({ maxLength: 30 })), { minLength: 1, maxLength: 200 }), async (before) => {
        const db = await DB.open('/db', { fs: new MemFileSystem(), writeBufferSize: 4096, maxFileSize: 8192, blockSize: 512 });
        const { seen, expected } = await readBehindFlushes(db, before, 6);
        expect(seen).toEqual(expected);
        await db.close();
      }),
      { numRuns: 20 },
    );
  });

  it('the same with flushes on the worker thread', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sievekv-arenas-'));
    dirs.push(dir);
    const db = await DB.open(dir, { writeBufferSize: 4096, maxFileSize: 8192, blockSize: 512 });
    const before: [number, string][] = Array.from({ length: 250 }, (_, i) => [(i * 7) % 300, `before ${i}`]);
    const { seen, expected } = await readBehindFlushes(db, before, 10);
    expect(seen).toEqual(expected);
    // And the database reads right after all of it (memtables in recycled arenas, tables flushed from them).
    for (let k = 0; k < 300; k++) expect(db.getSync(key(k))?.toString()).toBe(`round 9 ${'x'.repeat(40)}`);
    await db.close();
    const again = await DB.open(dir);
    for (let k = 0; k < 300; k++) expect(again.getSync(key(k))?.toString()).toBe(`round 9 ${'x'.repeat(40)}`);
    await again.close();
  });

  it('a closed database leaves its arenas to the next one opened: open, fill and close again allocate none (real files, worker flushes)', async () => {
    // A dropped SharedArrayBuffer waits for a full collection its size does not bring on
    // (memtable/arena-pool.ts): count the arenas allocated while databases come and go.
    const writeBufferSize = 40_000; // arenas of a size no other test uses: the spares are the process's
    const arenaBytes = storageBytes(writeBufferSize + (writeBufferSize >>> 3));
    const Shared = globalThis.SharedArrayBuffer;
    let allocated = 0;
    globalThis.SharedArrayBuffer = class extends Shared {
      constructor(length: number) {
        super(length);
        if (length === arenaBytes) allocated++;
      }
    } as typeof SharedArrayBuffer;
    const perCycle: number[] = [];
    try {
      for (let cycle = 0; cycle < 4; cycle++) {
        const dir = mkdtempSync(join(tmpdir(), 'sievekv-arenas-'));
        dirs.push(dir);
        const before = allocated;
        const db = await DB.open(dir, { writeBufferSize });
        for (let k = 0; k < 2000; k++) db.putSync(key(k), `value ${cycle} ${'y'.repeat(60)}`); // several switches and flushes
        await new Promise((resolve) => setTimeout(resolve, 50)); // flushes install
        expect(db.getSync(key(1999))?.toString()).toBe(`value ${cycle} ${'y'.repeat(60)}`);
        await db.close();
        perCycle.push(allocated - before);
      }
    } finally {
      globalThis.SharedArrayBuffer = Shared;
    }
    expect(perCycle[0]).toBeGreaterThan(0);
    expect(perCycle.slice(1)).toEqual([0, 0, 0]);
  });
});
