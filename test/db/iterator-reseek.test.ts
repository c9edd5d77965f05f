/**
 * Iterators that reached their end or their limit stay open until closed and can be placed again
 * with `seek` (Level's "ended, not closed"); loops over them close them; Level's range rule (gte
 * over gt, lte over lt). A property checks seek-after-the-end against a sorted model, over keys in
 * tables and in the memtable, in both directions and with both bounds of a side given.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { createEntryIterator } from '../../src/iterator/entry-iterator.js';
import { resolveIteratorOptions } from '../../src/iterator/iterator-options.js';
import { encodeInternalKey, ValueType } from '../../src/format/internal-key.js';
import { ArrayIterator } from '../iterator/array-iterator.js';

const keysOf = (rows: [Buffer, Buffer][]): string[] => rows.map(([k]) => k.toString());

function drain(it: { nextSync(): [Buffer, Buffer] | undefined }): [Buffer, Buffer][] {
  const rows: [Buffer, Buffer][] = [];
  for (let e = it.nextSync(); e !== undefined; e = it.nextSync()) rows.push(e);
  return rows;
}

async function filled(keys: string[]): Promise<DB> {
  const db = await DB.open('/db', { fs: new MemFileSystem(), writeBufferSize: 4096 });
  await db.batch(keys.map((k) => ({ type: 'put' as const, key: k, value: `v${k}` })));
  return db;
}

describe('an iterator at its end or limit', () => {
  it('stays open after next() reports done, and a seek goes on from the new position', async () => {
    const db = await filled(['a', 'b', 'c', 'd']);
    const it = db.iterator({ lt: 'd' });
    expect(keysOf(drain(it))).toEqual(['a', 'b', 'c']);
    expect(await it.next()).toEqual({ done: true, value: undefined });
    expect(it.closed).toBe(false);
    it.seek('b');
    expect(keysOf(drain(it))).toEqual(['b', 'c']);
    it.seek('0');
    expect(it.nextSync()?.[0].toString()).toBe('a');
    it.close();
    expect(it.closed).toBe(true);
    expect(() => it.seek('a')).toThrow(expect.objectContaining({ code: 'CLOSED' }));
    expect(it.nextSync()).toBeUndefined();
    await db.close();
  });

  it('in reverse too', async () => {
    const db = await filled(['a', 'b', 'c', 'd']);
    const it = db.iterator({ reverse: true, gt: 'a' });
    expect(keysOf(drain(it))).toEqual(['d', 'c', 'b']);
    it.seek('c');
    expect(keysOf(drain(it))).toEqual(['c', 'b']);
    it.close();
    await db.close();
  });

  it('at its limit: a seek is allowed but it stays done (the limit counts every entry yielded)', async () => {
    const db = await filled(['a', 'b', 'c']);
    const it = db.iterator({ limit: 4 });
    expect(keysOf(drain(it))).toEqual(['a', 'b', 'c']);
    it.seek('a');
    expect(keysOf(drain(it))).toEqual(['a']);
    it.seek('a');
    expect(drain(it)).toEqual([]);
    expect(it.closed).toBe(false);
    it.close();
    await db.close();
  });

  it('keeps reading its snapshot after a seek, whatever was written meanwhile', async () => {
    const db = await filled(['a', 'b']);
    const it = db.iterator();
    expect(keysOf(drain(it))).toEqual(['a', 'b']);
    await db.put('c', 'new');
    await db.del('a');
    await db.compactRange();
    it.seek('');
    expect(keysOf(drain(it))).toEqual(['a', 'b']);
    it.close();
    await db.close();
  });

  it('is ended by the database close: seek and next are then CLOSED', async () => {
    const db = await filled(['a']);
    const it = db.iterator();
    drain(it);
    await db.close();
    expect(() => it.seek('a')).toThrow(expect.objectContaining({ code: 'CLOSED' }));
    expect(() => it.nextSync()).toThrow(expect.objectContaining({ code: 'CLOSED' }));
    it.close();
  });

  it('a for await or for...of loop that runs out closes it (releasing its pins once)', async () => {
    const db = await filled(['a', 'b']);
    const a = db.iterator();
    const seen: string[] = [];
    for await (const [k] of a) seen.push(k.toString());
    expect(seen).toEqual(['a', 'b']);
    expect(a.closed).toBe(true);
    const b = db.iterator();
    expect([...b].length).toBe(2);
    expect(b.closed).toBe(true);
    expect(() => b.seek('a')).toThrow(expect.objectContaining({ code: 'CLOSED' }));
    await db.close();

    let releases = 0;
    const source = new ArrayIterator([{ key: encodeInternalKey(Buffer.from('k'), 1, ValueType.VALUE), value: Buffer.from('v') }]);
    const c = createEntryIterator(source, 5, resolveIteratorOptions(undefined), () => releases++);
    expect(drain(c)).toHaveLength(1);
    expect(releases).toBe(0); // ended by hand: still pinned
    c.seek('k');
    for (const _ of c) void _;
    expect(releases).toBe(1);
    c.close();
    expect(releases).toBe(1);
    expect(source.closed).toBe(1);
  });
});

describe('values: false', () => {
  it('yields every key with an empty value, in both directions and across a seek', async () => {
    const db = await filled(['a', 'b', 'c']);
    await db.compactRange();
    await db.put('d', 'in the memtable');
    for (const reverse of [false, true]) {
      const it = db.iterator({ values: false, reverse });
      const rows = drain(it);
      expect(keysOf(rows)).toEqual(reverse ? ['d', 'c', 'b', 'a'] : ['a', 'b', 'c', 'd']);
      expect(rows.every(([, v]) => v.length === 0)).toBe(true);
      it.seek('b');
      expect(keysOf(drain(it))).toEqual(reverse ? ['b', 'a'] : ['b', 'c', 'd']);
      it.close();
    }
    await db.close();
  });
});

describe("Level's range rule", () => {
  it('gte wins over gt and lte over lt, forward and reverse', async () => {
    const db = await filled(['1', '2', '3', '4', '5', '6', '7', '8']);
    const scan = (o: object): string[] => keysOf([...db.iterator(o)]);
    expect(scan({ gte: '3', gt: '5', lte: '6', lt: '4' })).toEqual(['3', '4', '5', '6']);
    expect(scan({ gte: '3', gt: '1', lte: '6', lt: '8' })).toEqual(['3', '4', '5', '6']);
    expect(scan({ gte: '3', gt: '5', reverse: true, limit: 2 })).toEqual(['8', '7']);
    expect(scan({ gte: '3', gt: '5', lte: '4', lt: '9', reverse: true })).toEqual(['4', '3']);
    await db.close();
  });
});

describe('seek after the end, against a sorted model', () => {
  const keyArb = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'd'), minLength: 0, maxLength: 3 });
  const boundArb = fc.option(keyArb, { nil: undefined });

  it('after draining, seek(t) then draining again yields the model keys from t within the bounds', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(keyArb, { maxLength: 40 }),
        fc.record({ gt: boundArb, gte: boundArb, lt: boundArb, lte: boundArb, reverse: fc.boolean() }),
        fc.array(keyArb, { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        async (keys, range, targets, inTables) => {
          const db = await DB.open('/db', { fs: new MemFileSystem(), writeBufferSize: 1024, blockSize: 128 });
          try {
            const half = Math.floor(keys.length / 2);
            for (const k of keys.slice(0, half)) await db.put(k, `v${k}`);
            if (inTables) await db.compactRange();
            for (const k of keys.slice(half)) db.putSync(k, `v${k}`);
            const options = Object.fromEntries(Object.entries(range).filter(([, v]) => v !== undefined));
            const lower = range.gte ?? range.gt;
            const upper = range.lte ?? range.lt;
            const inRange = (k: string): boolean =>
              (lower === undefined || (range.gte !== undefined ? k >= lower : k > lower)) &&
              (upper === undefined || (range.lte !== undefined ? k <= upper : k < upper));
            const model = keys.filter(inRange).sort();
            if (range.reverse) model.reverse();
            const it = db.iterator(options);
            expect(keysOf(drain(it))).toEqual(model);
            for (const t of targets) {
              it.seek(t);
              const expected = model.filter((k) => (range.reverse ? k <= t : k >= t));
              expect(keysOf(drain(it)), `seek(${t})`).toEqual(expected);
            }
            it.close();
          } finally {
            await db.close();
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
