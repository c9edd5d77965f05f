/**
 * What an iterator made per seek shares with the others: the frozen defaults of `db.iterator()`
 * without options, the seek target buffer (one per thread), and the database's list of open
 * iterators (swept, not a Set). Checked here: options given in any way are still read; iterators
 * whose seeks interleave each go on from their own position (a property against a sorted model,
 * over keys in tables and in the memtable, where the merging iterator puts off the seeks of the
 * tables a filter rules out); the list stays bounded and the close ends exactly the open ones.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { OpenIterators } from '../../src/db/iterators.js';
import type { RandomAccessFile } from '../../src/fs/file-system.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { resolveIteratorOptions } from '../../src/iterator/iterator-options.js';

describe('iterator options without any', () => {
  it('resolve to one frozen object, for undefined and for {}', () => {
    const a = resolveIteratorOptions(undefined);
    expect(resolveIteratorOptions({})).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    expect(a).toEqual({ lower: null, lowerInclusive: true, upper: null, upperInclusive: true, reverse: false, limit: Infinity, values: true, copy: true });
  });

  it('are still read when given as inherited or non-enumerable properties, and unknown ones rejected', () => {
    const inherited = resolveIteratorOptions(Object.create({ gt: 'b' }));
    expect(inherited.lower && Buffer.from(inherited.lower).toString()).toBe('b');
    expect(inherited.lowerInclusive).toBe(false);
    const hidden = {};
    Object.defineProperty(hidden, 'reverse', { value: true, enumerable: false });
    expect(resolveIteratorOptions(hidden).reverse).toBe(true);
    expect(() => resolveIteratorOptions({ gtt: 'a' })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });
});

/** A stand-in for an EntryIterator: what OpenIterators asks of one. */
class StubIterator {
  closed = false;
  ended = 0;
  end(): void {
    this.ended++;
    this.closed = true;
  }
}

describe('OpenIterators', () => {
  it('counts the open ones, stays within twice them and its slack, and ends only the open ones', () => {
    const list = new OpenIterators<StubIterator>();
    const kept: StubIterator[] = [];
    const closed: StubIterator[] = [];
    for (let i = 0; i < 10_000; i++) {
      const it = new StubIterator();
      list.add(it);
      if (i % 1000 === 0) {
        kept.push(it);
        continue;
      }
      it.closed = true;
      list.released();
      closed.push(it);
      expect(list.tracked).toBeLessThanOrEqual(2 * list.size + 64);
    }
    expect(list.size).toBe(kept.length);
    list.endAll();
    expect(kept.every((it) => it.ended === 1)).toBe(true);
    expect(closed.every((it) => it.ended === 0)).toBe(true);
    expect(list.tracked).toBe(0);
  });

  it('stays within its bound when iterators close and none is made after them', () => {
    const list = new OpenIterators<StubIterator>();
    const its = Array.from({ length: 1000 }, () => new StubIterator());
    for (const it of its) list.add(it);
    for (const it of its) {
      it.closed = true;
      list.released();
      expect(list.tracked).toBeLessThanOrEqual(2 * list.size + 64);
    }
    expect(list.size).toBe(0);
  });
});

describe('iterators made per seek', () => {
  it('each go on from their own position when their seeks interleave (property)', async () => {
    // Some keys long (70 bytes): targets longer than the shared buffer's first 64 bytes.
    const keyArb = fc.integer({ min: 0, max: 400 }).map((n) => String(n).padStart(n % 5 === 0 ? 70 : 4, '0'));
    const opArb = fc.oneof(
      // Mostly a present key (found in one place, put off in the others), else any.
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('seek' as const), which: fc.integer({ min: 0, max: 2 }), key: keyArb, present: fc.nat({ max: 3 }), pick: fc.nat() }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('next' as const), which: fc.integer({ min: 0, max: 2 }) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('reopen' as const), which: fc.integer({ min: 0, max: 2 }) }) },
    );
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.record({ key: keyArb, old: fc.boolean() }), { minLength: 1, maxLength: 300, selector: (r) => r.key }), fc.array(opArb, { maxLength: 100 }), async (rows, ops) => {
        // The old keys compacted into a level below; the others, in a small memtable, flushed into
        // level-0 tables but the last ones: a seek that finds its key in one of them puts off the
        // others whose filters rule it out.
        const db = await DB.open('/db', { fs: new MemFileSystem(), writeBufferSize: 1024 });
        try {
          for (const r of rows) if (r.old) db.putSync(r.key, `v${r.key}`);
          await db.compactRange();
          for (const r of rows) if (!r.old) db.putSync(r.key, `v${r.key}`);
          const sorted = rows.map((r) => r.key).sort();
          const iters = [db.iterator(), db.iterator(), db.iterator()];
          // The model: each iterator's next key index (-1: not placed or past the end).
          const at = [-1, -1, -1];
          for (const op of ops) {
            const w = op.which;
            if (op.kind === 'reopen') {
              iters[w]!.close();
              iters[w] = db.iterator();
              at[w] = -1;
            } else if (op.kind === 'seek') {
              const target = op.present > 0 ? sorted[op.pick % sorted.length]! : op.key;
              iters[w]!.seek(target);
              const i = sorted.findIndex((k) => k >= target);
              at[w] = i < 0 ? sorted.length : i;
            } else if (at[w]! >= 0) {
              const e = iters[w]!.nextSync();
              const want = sorted[at[w]!];
              expect(e?.[0].toString()).toBe(want);
              if (want !== undefined) {
                expect(e![1].toString()).toBe(`v${want}`);
                at[w]!++;
              }
            }
          }
          for (const it of iters) it.close();
        } finally {
          await db.close();
        }
      }),
      { numRuns: 100 },
    );
  });

  it('a database closed with some of them open ends those: their calls are CLOSED', async () => {
    const db = await DB.open('/db', { fs: new MemFileSystem(), writeBufferSize: 4096 });
    for (let i = 0; i < 200; i++) db.putSync(String(i).padStart(4, '0'), 'v');
    const open: ReturnType<DB['iterator']>[] = [];
    for (let i = 0; i < 3000; i++) {
      const it = db.iterator();
      it.seek(String(i % 200).padStart(4, '0'));
      expect(it.nextSync()?.[0].toString()).toBe(String(i % 200).padStart(4, '0'));
      if (i % 1000 === 7) open.push(it);
      else it.close();
    }
    await db.close();
    for (const it of open) {
      expect(it.closed).toBe(true);
      expect(() => it.nextSync()).toThrow(expect.objectContaining({ code: 'CLOSED' }));
    }
  });
});

describe('two iterators over tables a filter rules out', () => {
  it('each reads the tables whose seek was put off from its own target, not the other one\'s', async () => {
    const db = await DB.open('/db', { fs: new MemFileSystem(), writeBufferSize: 1024 });
    const key = (n: number): string => String(n).padStart(4, '0');
    // The even keys compacted into a level below, then the odd ones in level-0 tables and the
    // memtable. A seek to an even key finds it below; the filters of the level-0 tables and the
    // memtable rule that key out, and their seeks wait until their entries are needed.
    for (let n = 0; n < 200; n += 2) db.putSync(key(n), `v${n}`);
    await db.compactRange();
    for (let n = 1; n < 200; n += 2) db.putSync(key(n), `v${n}`);
    expect(Number(db.getProperty('sievekv.num-files-at-level0'))).toBeGreaterThan(0);
    const a = db.iterator();
    const b = db.iterator();
    a.seek(key(10));
    b.seek(key(150));
    expect(a.nextSync()?.[0].toString()).toBe(key(10));
    expect(b.nextSync()?.[0].toString()).toBe(key(150));
    expect(a.nextSync()?.[0].toString()).toBe(key(11));
    expect(b.nextSync()?.[0].toString()).toBe(key(151));
    a.close();
    b.close();
    await db.close();
  });
});

/** A file system whose table reads first call `during()`: user code that runs inside a seek. */
class ReentrantFs extends MemFileSystem {
  during: (() => void) | null = null;

  override openReadable(path: string): RandomAccessFile {
    const file = super.openReadable(path);
    const fs = this;
    return {
      size: file.size,
      close: () => file.close(),
      readAt(buf: Uint8Array, bufOffset: number, length: number, position: number): number {
        const during = fs.during;
        fs.during = null; // once
        during?.();
        return file.readAt(buf, bufOffset, length, position);
      },
    };
  }
}

describe('a seek that starts inside another one', () => {
  it('(a FileSystem reading for the first seeks another database) leaves the first one its target', async () => {
    const key = (n: number): string => String(n).padStart(4, '0');
    const fs = new ReentrantFs();
    const db = await DB.open('/db', { fs, writeBufferSize: 1024, blockCacheSize: 0 });
    for (let n = 0; n < 300; n++) db.putSync(key(n), `v${n}`);
    await db.compactRange();
    const other = await DB.open('/other', { fs: new MemFileSystem() });
    for (let n = 0; n < 300; n++) other.putSync(key(n), `w${n}`);
    const inner = other.iterator();
    let innerKey: string | undefined;
    fs.during = () => {
      inner.seek(key(250));
      innerKey = inner.nextSync()?.[0].toString();
    };
    const it = db.iterator();
    it.seek(key(100));
    expect(innerKey).toBe(key(250));
    expect(it.nextSync()?.[0].toString()).toBe(key(100));
    expect(it.nextSync()?.[0].toString()).toBe(key(101));
    it.close();
    inner.close();
    await other.close();
    await db.close();
  });
});
