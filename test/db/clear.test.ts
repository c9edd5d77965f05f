/**
 * `db.clear(range)`: deletes exactly the keys of the range (at most `limit`, from the top with
 * `reverse`), as one batch — a snapshot sees all of it or none, a crash keeps all or none —
 * without reading values, in issue order with other writes, with plain deletions LevelDB reads.
 * A property checks it against a sorted model over keys in tables and memtables.
 */
import { ClassicLevel } from 'classic-level';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { encodeInternalKey, ValueType } from '../../src/format/internal-key.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { DBIterator } from '../../src/iterator/db-iterator.js';
import type { InternalIterator } from '../../src/iterator/internal-iterator.js';
import { ArrayIterator, type Entry } from '../iterator/array-iterator.js';
import { compareEntries } from '../iterator/iterator-contract.js';
import { rng, testSeed } from '../support/seed.js';
import { codeOf } from '../support/error-code.js';


async function keys(db: DB, options: { snapshot?: ReturnType<DB['snapshot']> } = {}): Promise<string[]> {
  const out: string[] = [];
  for await (const [k] of db.iterator(options)) out.push(k.toString());
  return out;
}

const DIGITS = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'];

async function digits(fs = new MemFileSystem()): Promise<DB> {
  const db = await DB.open('/db', { fs, writeBufferSize: 1024 });
  await db.batch(DIGITS.map((k) => ({ type: 'put' as const, key: k, value: `v${k}`.repeat(20) })));
  return db;
}

describe('clear', () => {
  it('deletes the range, at most limit keys, from the top with reverse; resolves with the count', async () => {
    const db = await digits();
    expect(await db.clear({ gt: '1', lte: '3' })).toBe(2);
    expect(await keys(db)).toEqual(['0', '1', '4', '5', '6', '7', '8', '9']);
    expect(await db.clear({ gte: '4', limit: 2 })).toBe(2);
    expect(await keys(db)).toEqual(['0', '1', '6', '7', '8', '9']);
    expect(await db.clear({ reverse: true, limit: 3 })).toBe(3);
    expect(await keys(db)).toEqual(['0', '1', '6']);
    expect(await db.clear({ limit: 0 })).toBe(0);
    expect(db.clearSync({ gte: '1', gt: '5' })).toBe(2); // gte wins: 1 and 6
    expect(await keys(db)).toEqual(['0']);
    expect(await db.clear()).toBe(1);
    expect(await keys(db)).toEqual([]);
    expect(await db.clear()).toBe(0);
    await db.close();
  });

  it('is atomic: a snapshot taken before sees every key, one taken after none', async () => {
    const db = await digits();
    await db.compactRange(); // some keys in tables, some in the memtable
    await db.put('5', 'newer');
    const before = db.snapshot();
    await db.clear({ gte: '2', lt: '8' });
    const after = db.snapshot();
    expect(await keys(db, { snapshot: before })).toEqual(DIGITS);
    expect(await keys(db, { snapshot: after })).toEqual(['0', '1', '8', '9']);
    expect((await db.get('5', { snapshot: before }))!.toString()).toBe('newer');
    before.release();
    after.release();
    await db.close();
  });

  it('with a snapshot, deletes what the snapshot sees and keeps keys written since', async () => {
    const db = await digits();
    const snap = db.snapshot();
    await db.put('a', 'later');
    await db.del('3');
    expect(await db.clear({ snapshot: snap, gte: '2' })).toBe(8); // 2..9 as the snapshot saw them
    expect(await keys(db)).toEqual(['0', '1', 'a']);
    snap.release();
    expect(await codeOf(() => db.clear({ snapshot: snap }))).toBe('CLOSED');
    await db.close();
  });

  it('keeps issue order: a write issued before the clear is cleared, one issued after is kept', async () => {
    const db = await digits();
    // Synced writes queue behind the group commit's fdatasync: not yet visible when clear is called.
    const early = db.put('33', 'early', { sync: true });
    const cleared = db.clear({ gte: '3', lt: '4' });
    const late = db.put('34', 'late', { sync: true });
    await Promise.all([early, cleared, late]);
    expect(await cleared).toBe(2); // 3 and 33
    expect(await keys(db)).toEqual(['0', '1', '2', '34', '4', '5', '6', '7', '8', '9']);
    await db.close();
  });

  it('a crash keeps all of it or none (torn WAL tails of every length), and a synced clear survives', async () => {
    const fs = new MemFileSystem();
    const db = await digits(fs);
    await db.compactRange();
    await db.put('x', 'y', { sync: true });
    await db.clear({ lt: '5' }); // unsynced: a crash may keep any prefix of its WAL record
    const next = rng(testSeed() ^ 0xc1ea2);
    const outcomes = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const crashed = await DB.open('/db', { fs: fs.crashClone({ rng: next }), paranoidChecks: false });
      const left = await keys(crashed);
      await crashed.close();
      expect([[...DIGITS, 'x'], ['5', '6', '7', '8', '9', 'x']]).toContainEqual(left);
      outcomes.add(left.join());
    }
    expect(outcomes.size).toBe(2); // both ends came up: the check could tell them apart
    await db.clear({ gte: 'x', sync: true });
    const synced = fs.crashClone();
    await db.close();
    const reopened = await DB.open('/db', { fs: synced });
    expect(await keys(reopened)).toEqual(['5', '6', '7', '8', '9']);
    await reopened.close();
  });

  it('never reads a value: a keys-only scan asks its source for no value, in either direction', () => {
    const put = (k: string, seq: number): Entry => ({ key: encodeInternalKey(Buffer.from(k), seq, ValueType.VALUE), value: Buffer.from(`value of ${k}`) });
    const entries = [put('a', 1), put('b', 2), put('b', 5), put('c', 3), { key: encodeInternalKey(Buffer.from('c'), 6, ValueType.DELETION), value: new Uint8Array(0) }, put('d', 4)].sort(compareEntries);
    for (const reverse of [false, true]) {
      const source = new ArrayIterator(entries);
      let valueReads = 0;
      const counting: InternalIterator = {
        valid: () => source.valid(),
        seekToFirst: () => source.seekToFirst(),
        seekToLast: () => source.seekToLast(),
        seek: (t) => source.seek(t),
        next: () => source.next(),
        prev: () => source.prev(),
        key: () => source.key(),
        value: () => {
          valueReads++;
          return source.value();
        },
        close: () => source.close(),
      };
      const it = new DBIterator(counting, 10, undefined, true);
      const seen: string[] = [];
      if (reverse) for (it.seekToLast(); it.valid(); it.prev()) seen.push(Buffer.from(it.key()).toString() + Buffer.from(it.value()).length);
      else for (it.seekToFirst(); it.valid(); it.next()) seen.push(Buffer.from(it.key()).toString() + Buffer.from(it.value()).length);
      expect(seen).toEqual(reverse ? ['d0', 'b0', 'a0'] : ['a0', 'b0', 'd0']);
      expect(valueReads).toBe(0);
    }
  });

  it('a range too large for one batch is INVALID_ARGUMENT and deletes nothing; bad options are INVALID_ARGUMENT', async () => {
    const db = await DB.open('/db', { fs: new MemFileSystem(), maxBatchSize: 1024 });
    for (let i = 0; i < 200; i++) db.putSync(`key-${String(i).padStart(3, '0')}`, 'v'); // 9 bytes a deletion
    expect(await codeOf(() => db.clear())).toBe('INVALID_ARGUMENT');
    expect((await keys(db)).length).toBe(200);
    expect(await db.clear({ limit: 40 })).toBe(40); // in parts, it goes
    for (const bad of [{ values: false }, { sync: 'yes' }, { limit: -2 }, { gt: 5 }, { snapshot: {} }, { unknown: 1 }]) {
      expect(await codeOf(() => db.clear(bad as never)), JSON.stringify(bad)).toBe('INVALID_ARGUMENT');
    }
    expect(await codeOf(() => db.clearSync('all' as never))).toBe('INVALID_ARGUMENT');
    expect((await keys(db)).length).toBe(160);
    await db.close();
    expect(await codeOf(() => db.clear())).toBe('CLOSED');
  });

  const temp = mkdtempSync(join(tmpdir(), 'sievekv-clear-'));
  afterAll(() => rmSync(temp, { recursive: true, force: true }));

  it('writes plain deletions: LevelDB (classic-level) opens the database and sees the range gone', async () => {
    const dir = join(temp, 'db');
    const db = await DB.open(dir, { compression: 'none', writeBufferSize: 4096 });
    for (let i = 0; i < 300; i++) await db.put(`k${String(i).padStart(3, '0')}`, `value ${i}`);
    await db.compactRange();
    await db.clear({ gte: 'k100', lt: 'k200' });
    await db.compactRange(); // the deletions reach a table too
    await db.clear({ gte: 'k250' }); // and some stay in the WAL
    await db.close();
    const ldb = new ClassicLevel<string, string>(dir, { createIfMissing: false });
    const seen: string[] = [];
    for await (const k of ldb.keys()) seen.push(k);
    await ldb.close();
    const expected = Array.from({ length: 300 }, (_, i) => `k${String(i).padStart(3, '0')}`).filter((k) => k < 'k100' || (k >= 'k200' && k < 'k250'));
    expect(seen).toEqual(expected);
  });

  it('property: leaves exactly the model minus the first `limit` keys of the range in iteration order', async () => {
    const key = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'd'), maxLength: 3 });
    const bound = fc.option(key, { nil: undefined });
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(key, { maxLength: 40 }),
        fc.record({ gt: bound, gte: bound, lt: bound, lte: bound, reverse: fc.boolean(), limit: fc.option(fc.nat({ max: 10 }), { nil: undefined }) }),
        fc.boolean(),
        async (present, range, inTables) => {
          const db = await DB.open('/db', { fs: new MemFileSystem(), writeBufferSize: 1024, blockSize: 128 });
          try {
            for (const k of present) db.putSync(k, `v${k}`);
            if (inTables) await db.compactRange();
            const options = Object.fromEntries(Object.entries(range).filter(([, v]) => v !== undefined));
            const lower = range.gte ?? range.gt;
            const upper = range.lte ?? range.lt;
            const inRange = (k: string): boolean =>
              (lower === undefined || (range.gte !== undefined ? k >= lower : k > lower)) &&
              (upper === undefined || (range.lte !== undefined ? k <= upper : k < upper));
            const order = present.filter(inRange).sort();
            if (range.reverse) order.reverse();
            const gone = new Set(order.slice(0, range.limit ?? order.length));
            expect(await db.clear(options)).toBe(gone.size);
            expect(await keys(db)).toEqual(present.filter((k) => !gone.has(k)).sort());
          } finally {
            await db.close();
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
