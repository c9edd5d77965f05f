/**
 * Issue 10: an open does not write what its WALs held to level 0 before it returns. The replayed
 * memtable becomes the immutable memtable, read as such and flushed in the background by the
 * normal flush path, while a fresh WAL takes writes; the replayed WALs stay live (synced, and
 * named by the MANIFEST's log number) until that flush installs — the state after a memtable
 * switch. A crash at any point after the open loses nothing the open showed.
 *
 * When the WALs cannot stay as they are — a torn tail was dropped, damage skipped, or the replay
 * outgrew its memory limit — the open writes the memtable to level 0 itself, as before.
 *
 * MemFileSystem: jobs run on the database's thread on the next turn of the event loop, so "right
 * after the open" is before the flush, and `nextTurn()` lets it install.
 */
import { describe, expect, it } from 'vitest';
import { DB, type OpenOptions } from '../../src/db.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { DezhouRegionRouter } from '../../src/shard/dezhou-router.js';
import { rng, testSeed } from '../support/seed.js';

const keyOf = (i: number): string => `key-${String(i).padStart(6, '0')}`;
const valueOf = (i: number, gen = 0): string => `v${gen}-${i}-`.padEnd(60, 'x');
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
/**
 * Until `done` (at most 5 s): the replayed memtable's flush starts once reads pause for 50 ms
 * (deferMergesDuringReads; db/merge-deferral.ts), then takes a turn.
 */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
}
/** Nothing flushes while the tests write (each write stays in the WAL). */
const OPTIONS = { writeBufferSize: 1024 * 1024 } as const;

const wals = (fs: MemFileSystem, dir = '/db'): string[] => fs.list(dir).filter((n) => n.endsWith('.log')).sort();
const tables = (fs: MemFileSystem, dir = '/db'): string[] => fs.list(dir).filter((n) => n.endsWith('.ldb')).sort();
const level0 = (db: DB): number => Number(db.getProperty('sievekv.num-files-at-level0'));
const log = (fs: MemFileSystem): string => Buffer.from(fs.readFile('/db/LOG')).toString();
/** These tests are about the WAL replay: a close's memtable image (db/memtable-image.ts) would skip it. */
const dropImage = (fs: MemFileSystem): void => fs.remove('/db/MEMTABLE');

/**
 * A database on a fresh file system with keys [0, n) written without sync and never flushed, then
 * closed: its WAL holds them, not yet synced (a close does not sync it, as a SIGKILL would not).
 */
async function unsyncedWrites(n: number, options: OpenOptions = {}): Promise<MemFileSystem> {
  const fs = new MemFileSystem();
  const db = await DB.open('/db', { ...OPTIONS, ...options, fs });
  for (let i = 0; i < n; i++) db.putSync(keyOf(i), valueOf(i));
  await db.close();
  return fs;
}

async function expectKeys(db: DB, n: number, gen = 0): Promise<void> {
  let count = 0;
  for await (const [k, v] of db.iterator()) {
    expect(v.toString()).toBe(valueOf(Number(k.toString().slice(4)), gen));
    count++;
  }
  expect(count).toBe(n);
  for (let i = 0; i < n; i += 7) expect(db.getSync(keyOf(i))?.toString()).toBe(valueOf(i, gen));
  expect(db.getSync('absent')).toBeUndefined();
}

describe('reopen flushes the replayed memtable in the background', () => {
  it('reads see it while it flushes; the flush installs, and the replayed WAL goes', async () => {
    const fs = await unsyncedWrites(500);
    dropImage(fs);
    const [replayed] = wals(fs);
    const db = await DB.open('/db', { ...OPTIONS, fs });
    // Right after the open: nothing in level 0 yet, the replayed WAL still live beside a new one.
    expect(level0(db)).toBe(0);
    expect(wals(fs)).toHaveLength(2);
    expect(wals(fs)[0]).toBe(replayed);
    await expectKeys(db, 500); // the first reads are served from the immutable memtable
    expect(log(fs)).toMatch(/1 WAL\(s\) replayed, their memtable flushed in the background/);
    await until(() => level0(db) > 0);
    expect(level0(db)).toBe(1);
    expect(wals(fs)).toHaveLength(1);
    expect(wals(fs)[0]).not.toBe(replayed);
    await expectKeys(db, 500);
    await db.close();
  });

  it('a crash right after the reopen loses nothing: the replayed WALs are synced before the open returns', async () => {
    const seed = testSeed();
    const next = rng(seed);
    const fs = await unsyncedWrites(400);
    const db = await DB.open('/db', { ...OPTIONS, fs });
    expect(level0(db)).toBe(0); // still to flush
    // A power cut now: only what was synced survives — the strict way, and torn the harsh ways.
    const crashes = [fs.crashClone(), ...Array.from({ length: 8 }, () => fs.crashClone({ rng: next, zeroFill: 0.5 }))];
    await db.close();
    for (const [i, crashed] of crashes.entries()) {
      const reopened = await DB.open('/db', { ...OPTIONS, fs: crashed });
      try {
        await expectKeys(reopened, 400);
      } catch (err) {
        throw new Error(`crash image ${i} (SIEVE_SEED=${seed}): ${(err as Error).message}`, { cause: err });
      } finally {
        await reopened.close();
      }
    }
  });

  it('a crash after the background flush installed loses nothing either', async () => {
    const fs = await unsyncedWrites(300);
    const db = await DB.open('/db', { ...OPTIONS, fs });
    await until(() => level0(db) > 0);
    expect(level0(db)).toBe(1);
    const crashed = fs.crashClone();
    await db.close();
    const reopened = await DB.open('/db', { ...OPTIONS, fs: crashed });
    await expectKeys(reopened, 300);
    await reopened.close();
  });

  it('writes that fill the new memtable at once wait for the replayed one to flush; nothing is lost', async () => {
    const fs = await unsyncedWrites(300, { writeBufferSize: 16 * 1024 });
    const options: OpenOptions = { fs, writeBufferSize: 16 * 1024 };
    const db = await DB.open('/db', options);
    // Synchronous writes, no turn of the event loop: the second memtable switch has to wait
    // (blocking) for the replayed memtable's flush instead of replacing it.
    for (let i = 0; i < 300; i++) db.putSync(keyOf(i), valueOf(i, 1));
    for (let i = 300; i < 600; i++) db.putSync(keyOf(i), valueOf(i, 1));
    await expectKeys(db, 600, 1);
    await db.close();
    const reopened = await DB.open('/db', options);
    await expectKeys(reopened, 600, 1);
    await reopened.close();
  });

  it('several WALs (a flush the last close abandoned) replay into one memtable, flushed in the background', async () => {
    const fs = new MemFileSystem();
    const options: OpenOptions = { fs, writeBufferSize: 16 * 1024 };
    let db = await DB.open('/db', options);
    for (let i = 0; i < 300; i++) db.putSync(keyOf(i), valueOf(i)); // ~2 write buffers: a switch, its flush queued
    await db.close(); // abandons that flush
    dropImage(fs);
    expect(wals(fs).length).toBeGreaterThanOrEqual(2);
    const replayed = wals(fs);
    db = await DB.open('/db', options);
    expect(log(fs)).toMatch(new RegExp(`${replayed.length} WAL\\(s\\) replayed, their memtable flushed in the background`));
    await expectKeys(db, 300);
    await until(() => wals(fs).filter((n) => replayed.includes(n)).length === 0);
    expect(wals(fs).filter((n) => replayed.includes(n))).toEqual([]);
    await expectKeys(db, 300);
    await db.close();
  });

  it('the flush waits while reads keep coming, and starts once a write comes (deferMergesDuringReads)', async () => {
    const fs = await unsyncedWrites(500);
    dropImage(fs);
    const db = await DB.open('/db', { ...OPTIONS, fs });
    /** Reads for `ms` without a pause of more than a turn; stops early once `stop` holds. */
    const readWhile = async (ms: number, stop = (): boolean => false): Promise<void> => {
      const end = Date.now() + ms;
      for (let i = 0; Date.now() < end && !stop(); i++) {
        for (let j = 0; j < 50; j++) expect(db.getSync(keyOf((i * 50 + j) % 500))?.toString()).toBe(valueOf((i * 50 + j) % 500));
        await nextTurn();
      }
    };
    await readWhile(400);
    expect(level0(db)).toBe(0); // held: the reads never paused for 50 ms
    db.putSync(keyOf(600), valueOf(600));
    const wrote = Date.now();
    await readWhile(5000, () => level0(db) > 0);
    expect(level0(db)).toBe(1);
    expect(Date.now() - wrote).toBeLessThan(1000);
    await db.close();

    // With the option off, the flush takes the next turn (LevelDB flushes the replayed WAL within its open).
    const fs2 = await unsyncedWrites(100);
    dropImage(fs2);
    const eager = await DB.open('/db', { ...OPTIONS, fs: fs2, deferMergesDuringReads: false });
    for (let turn = 0; turn < 5 && level0(eager) === 0; turn++) await nextTurn();
    expect(level0(eager)).toBe(1);
    await eager.close();
  });

  it('opens that close before their flush installs leave no more WALs than the data needs', async () => {
    const fs = await unsyncedWrites(100);
    for (let round = 0; round < 5; round++) {
      const db = await DB.open('/db', { ...OPTIONS, fs });
      await expectKeys(db, 100);
      await db.close(); // before the flush's turn: abandoned
    }
    // The WAL holding the data, and the empty one the last open made.
    expect(wals(fs)).toHaveLength(2);
    expect(tables(fs)).toEqual([]);
  });

  it('a sharded database flushes every region’s replayed memtable in the background', async () => {
    const fs = new MemFileSystem();
    const options: OpenOptions = { ...OPTIONS, fs, router: new DezhouRegionRouter() };
    let db = await DB.open('/db', options);
    db.batchSync(Array.from({ length: 400 }, (_, i) => ({ type: 'put' as const, key: keyOf(i), value: valueOf(i) })));
    await db.close();
    db = await DB.open('/db', options);
    expect(level0(db)).toBe(0);
    await expectKeys(db, 400);
    await until(() => level0(db) > 0);
    for (let turn = 0; turn < 20 && level0(db) < 2; turn++) await nextTurn(); // a job per region, one per turn
    const regions = JSON.parse(db.getProperty('sievekv.regions')!) as unknown[];
    expect(level0(db)).toBeGreaterThan(1); // one table per region that got keys
    expect(level0(db)).toBeLessThanOrEqual(regions.length);
    await expectKeys(db, 400);
    await db.close();
  });
});

describe('when the replayed WALs cannot stay as they are, the open writes level 0 itself', () => {
  it('a torn tail was dropped: the WAL that ended torn is written to a table and deleted', async () => {
    const fs = await unsyncedWrites(200);
    const [wal] = wals(fs);
    const bytes = fs.readFile(`/db/${wal}`);
    const torn = fs.createWritable(`/db/${wal}`);
    torn.append(bytes.subarray(0, bytes.length - 10)); // the last record cut short
    torn.sync();
    torn.close();
    const db = await DB.open('/db', { ...OPTIONS, fs });
    expect(level0(db)).toBe(1);
    expect(wals(fs)).not.toContain(wal);
    expect(Number(JSON.parse(db.getProperty('sievekv.stats')!).walTornBytes)).toBeGreaterThan(0);
    await expectKeys(db, 199);
    await db.close();
  });

  it('the replay outgrew its memory limit (a larger write buffer wrote the WAL): tables during the open', async () => {
    const fs = await unsyncedWrites(3000); // ~300 KB of memtable, in one WAL
    const db = await DB.open('/db', { ...OPTIONS, fs, writeBufferSize: 16 * 1024 });
    expect(level0(db)).toBeGreaterThan(1);
    expect(wals(fs)).toHaveLength(1); // only the new one
    await expectKeys(db, 3000);
    await db.close();
  });

  it('damage skipped (paranoidChecks off): the WAL goes to lost/, what it held to a table', async () => {
    const fs = await unsyncedWrites(200);
    const [wal] = wals(fs);
    const bytes = fs.readFile(`/db/${wal}`);
    bytes[100]! ^= 0x40; // inside the first record: a checksum failure with good records after it
    const damaged = fs.createWritable(`/db/${wal}`);
    damaged.append(bytes);
    damaged.sync();
    damaged.close();
    const db = await DB.open('/db', { ...OPTIONS, fs, paranoidChecks: false });
    expect(level0(db)).toBe(1);
    expect(fs.list('/db/lost')).toEqual([wal]);
    expect(wals(fs)).toHaveLength(1);
    await db.close();
  });
});
