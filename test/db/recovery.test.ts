/**
 * Recovery from damaged files. A database closed cleanly keeps its last writes only in the WAL
 * (close does not flush the memtable), so these tests damage that WAL and reopen:
 * - cut at any byte (a torn last record, also one spanning several 32 KiB log blocks): open
 *   succeeds with exactly the writes whose records ended before the cut;
 * - a damaged record followed by good ones: CORRUPTION (naming the WAL) by default; with
 *   `paranoidChecks: false` the damaged stretch is skipped, the rest recovered, and LOG says so;
 * - a table the MANIFEST names is missing, CURRENT is damaged or names a missing MANIFEST:
 *   CORRUPTION.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { isSieveError, type SieveError } from '../../src/errors.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';

const LOG_BLOCK = 32 * 1024;
const LOG_HEADER = 7;
const OPTIONS = { writeBufferSize: 8 * 1024 * 1024 } as const; // nothing flushes: every write stays in the WAL

/** The one WAL of /db (the only .log file after a clean close without flushes). */
function walPath(fs: MemFileSystem): string {
  const logs = fs.list('/db').filter((n) => n.endsWith('.log'));
  expect(logs).toHaveLength(1);
  return `/db/${logs[0]}`;
}

/** Replaces `path` with `data` (durably). */
function rewrite(fs: MemFileSystem, path: string, data: Uint8Array): void {
  const file = fs.createWritable(path);
  file.append(data);
  file.sync();
  file.close();
  fs.syncDir('/db');
}

const keyOf = (i: number): string => `key-${String(i).padStart(5, '0')}`;
const valueOf = (i: number, size: number): string => `${i}:`.padEnd(size, String.fromCharCode(97 + (i % 26)));

/**
 * Writes `sizes.length` puts (key i = valueOf(i, sizes[i])) and closes. Returns the file system,
 * the WAL's path and each record's [start, end) offsets in it.
 */
async function writeWal(sizes: readonly number[]): Promise<{ fs: MemFileSystem; wal: string; records: [number, number][] }> {
  const fs = new MemFileSystem();
  const db = await DB.open('/db', { ...OPTIONS, fs });
  const wal = walPath(fs);
  const records: [number, number][] = [];
  for (const [i, size] of sizes.entries()) {
    const before = fs.size(wal);
    await db.put(keyOf(i), valueOf(i, size));
    // A record starts at the next block if fewer than a header's bytes were left in this one.
    const left = LOG_BLOCK - (before % LOG_BLOCK);
    records.push([left < LOG_HEADER ? before + left : before, fs.size(wal)]);
  }
  await db.close();
  return { fs, wal, records };
}

async function presentKeys(db: DB, n: number): Promise<number[]> {
  const present: number[] = [];
  for (let i = 0; i < n; i++) {
    const v = await db.get(keyOf(i));
    if (v !== undefined) present.push(i);
  }
  return present;
}

async function openError(fs: MemFileSystem, options: Record<string, unknown> = {}): Promise<SieveError> {
  try {
    const db = await DB.open('/db', { ...OPTIONS, fs, ...options });
    await db.close();
  } catch (err) {
    if (isSieveError(err)) return err;
    throw err;
  }
  throw new Error('open succeeded');
}

const sizesArb = fc.array(
  fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max: 300 }) }, { weight: 1, arbitrary: fc.integer({ min: 20_000, max: 80_000 }) }),
  { minLength: 1, maxLength: 30, size: 'max' },
);

describe('a torn WAL tail', () => {
  it('cut at any byte: open keeps exactly the records that ended before the cut', async () => {
    await fc.assert(
      fc.asyncProperty(sizesArb, fc.double({ min: 0, max: 1, noNaN: true }), async (sizes, where) => {
        const { fs, wal, records } = await writeWal(sizes);
        const full = fs.readFile(wal);
        const cut = Math.floor(where * full.length);
        rewrite(fs, wal, full.subarray(0, cut));
        const db = await DB.open('/db', { ...OPTIONS, fs });
        const kept = records.filter(([, end]) => end <= cut).length;
        expect(await presentKeys(db, sizes.length)).toEqual([...Array(kept).keys()]);
        for (let i = 0; i < kept; i++) expect(db.getSync(keyOf(i))?.toString()).toBe(valueOf(i, sizes[i]!));
        // The database goes on: new writes, a reopen, all there (sequence numbers did not collide).
        await db.put('after', 'cut');
        await db.close();
        const again = await DB.open('/db', { ...OPTIONS, fs });
        expect(await presentKeys(again, sizes.length)).toEqual([...Array(kept).keys()]);
        expect(again.getSync('after')?.toString()).toBe('cut');
        await again.close();
      }),
      { numRuns: 120 },
    );
  });

  it('a WAL with trailing zeros (preallocated space) or empty opens cleanly', async () => {
    const { fs, wal } = await writeWal([10, 20, 30]);
    const full = fs.readFile(wal);
    const padded = new Uint8Array(full.length + 1000);
    padded.set(full);
    rewrite(fs, wal, padded);
    let db = await DB.open('/db', { ...OPTIONS, fs });
    expect(await presentKeys(db, 3)).toEqual([0, 1, 2]);
    await db.close();
    // After that open the data is in a table; an empty new WAL is what a crash right after a switch leaves.
    rewrite(fs, walPath(fs), new Uint8Array(0));
    db = await DB.open('/db', { ...OPTIONS, fs });
    expect(await presentKeys(db, 3)).toEqual([0, 1, 2]);
    await db.close();
  });
});

describe('a damaged WAL record followed by good ones', () => {
  // Sixty 1 KiB records fill two log blocks and start a third: damage in the first block is
  // followed by good records in the next.
  const sizes = Array.from({ length: 60 }, () => 1000);
  const damage = 5;

  async function damaged(): Promise<{ fs: MemFileSystem; wal: string; records: [number, number][] }> {
    const w = await writeWal(sizes);
    const bytes = w.fs.readFile(w.wal);
    bytes[w.records[damage]![0] + LOG_HEADER + 20]! ^= 0x40; // a payload byte: the checksum no longer matches
    rewrite(w.fs, w.wal, bytes);
    return w;
  }

  it('is CORRUPTION by default (paranoidChecks), naming the WAL and the offset', async () => {
    const { fs, wal, records } = await damaged();
    const err = await openError(fs);
    expect(err.code).toBe('CORRUPTION');
    expect(err.file).toBe(wal);
    expect(err.offset).toBe(records[damage]![0]);
    // Nothing was changed by the failed open: it fails the same way again, and the lock is free.
    expect((await openError(fs)).code).toBe('CORRUPTION');
  });

  it('with paranoidChecks: false, skips the damaged stretch, recovers the rest and says so in LOG', async () => {
    const { fs, records } = await damaged();
    const db = await DB.open('/db', { ...OPTIONS, fs, paranoidChecks: false });
    // Only the damaged record is lost: the reader resumes at the next record that verifies.
    const expected = records.flatMap((_, i) => (i !== damage ? [i] : []));
    expect(await presentKeys(db, sizes.length)).toEqual(expected);
    for (const i of expected) expect(db.getSync(keyOf(i))?.toString()).toBe(valueOf(i, sizes[i]!));
    expect(JSON.parse(db.getProperty('sievekv.stats')!).walRecordsSkipped).toBeGreaterThan(0);
    const log = new TextDecoder().decode(fs.readFile('/db/LOG'));
    expect(log).toMatch(/skipped damaged WAL bytes at \/db\/\d+\.log:\d+/);
    await db.close();
    // The skip was made permanent by recovery's flush: a paranoid open now succeeds.
    const again = await DB.open('/db', { ...OPTIONS, fs });
    expect(await presentKeys(again, sizes.length)).toEqual(expected);
    await again.close();
  });
});

describe('damaged or missing database files', () => {
  async function flushedDb(): Promise<MemFileSystem> {
    const fs = new MemFileSystem();
    const db = await DB.open('/db', { ...OPTIONS, fs });
    for (let i = 0; i < 50; i++) await db.put(keyOf(i), valueOf(i, 20));
    await db.compactRange();
    await db.close();
    return fs;
  }

  it('a table the MANIFEST names is missing: CORRUPTION, paranoid or not', async () => {
    const fs = await flushedDb();
    const tables = fs.list('/db').filter((n) => n.endsWith('.ldb'));
    expect(tables.length).toBeGreaterThan(0);
    fs.remove(`/db/${tables[0]}`);
    expect((await openError(fs)).code).toBe('CORRUPTION');
    expect((await openError(fs, { paranoidChecks: false })).code).toBe('CORRUPTION');
  });

  it('CURRENT damaged, or naming a MANIFEST that is not there: CORRUPTION', async () => {
    const fs = await flushedDb();
    const current = fs.readFile('/db/CURRENT');
    rewrite(fs, '/db/CURRENT', new TextEncoder().encode('garbage'));
    expect((await openError(fs)).code).toBe('CORRUPTION');
    rewrite(fs, '/db/CURRENT', new TextEncoder().encode('MANIFEST-999999\n'));
    expect((await openError(fs)).code).toBe('CORRUPTION');
    rewrite(fs, '/db/CURRENT', current);
    const db = await DB.open('/db', { ...OPTIONS, fs });
    expect(await presentKeys(db, 50)).toHaveLength(50);
    await db.close();
  });

  it('a damaged table block: reads report CORRUPTION, not a wrong value', async () => {
    const fs = await flushedDb();
    const table = `/db/${fs.list('/db').find((n) => n.endsWith('.ldb'))!}`;
    const bytes = fs.readFile(table);
    bytes[10]! ^= 0x01; // inside the first data block
    rewrite(fs, table, bytes);
    const db = await DB.open('/db', { ...OPTIONS, fs });
    let err: unknown;
    try {
      for (let i = 0; i < 50; i++) await db.get(keyOf(i));
    } catch (e) {
      err = e;
    }
    expect(isSieveError(err, 'CORRUPTION'), String(err)).toBe(true);
    await db.close();
  });
});
