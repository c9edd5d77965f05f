/**
 * A closed iterator's tree (merging iterator, memtable and level iterators) serves the next
 * iterator while the database's version and memtables are the same (db/iterators.ts,
 * IteratorTrees). What must hold: every iterator sees exactly what a fresh one would (writes and
 * deletes made in between, its own snapshot); a kept tree never pins what a flush or compaction
 * replaced (its files are deleted, as with no iterator kept); a tree whose iterator met an error
 * is not kept.
 */
import { readdirSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { encodeInternalKey, ValueType } from '../../src/format/internal-key.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import type { InternalIterator } from '../../src/iterator/internal-iterator.js';
import { DBIterator } from '../../src/iterator/db-iterator.js';
import { ArrayIterator } from '../iterator/array-iterator.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const k = (i: number): string => `key-${String(i).padStart(4, '0')}`;
const text = (b: Buffer | undefined): string | undefined => b?.toString();

/** The model's entries at or after `from` (all of them without), ascending, up to `limit`. */
function modelRange(model: Map<string, string>, from: string | undefined, limit: number): [string, string][] {
  return [...model.entries()]
    .filter(([key]) => from === undefined || key >= from)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .slice(0, limit);
}

type Op =
  | { kind: 'put'; key: number; value: number }
  | { kind: 'del'; key: number }
  | { kind: 'seekRead'; key: number }
  | { kind: 'scan'; reverse: boolean }
  | { kind: 'snapshotScan' }
  | { kind: 'flush' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('put' as const), key: fc.nat(199), value: fc.nat(9999) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('del' as const), key: fc.nat(199) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('seekRead' as const), key: fc.nat(210) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('scan' as const), reverse: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'snapshotScan' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'flush' as const }) },
);

describe('iterator trees kept between iterators', () => {
  it('every iterator reads as a fresh one would: writes between them, snapshots, flushes and merges', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 120 }), async (ops) => {
        const fs = new MemFileSystem();
        // Small buffers and tables: writes switch memtables and flushes install versions often.
        const db = await DB.open('/db', { fs, writeBufferSize: 2048, maxFileSize: 2048, blockSize: 256 });
        const model = new Map<string, string>();
        try {
          for (const op of ops) {
            if (op.kind === 'put') {
              const v = `v${op.value}-${'x'.repeat(op.value % 40)}`;
              db.putSync(k(op.key), v);
              model.set(k(op.key), v);
            } else if (op.kind === 'del') {
              db.delSync(k(op.key));
              model.delete(k(op.key));
            } else if (op.kind === 'seekRead') {
              const it = db.iterator({ gte: k(op.key), limit: 2 });
              const got = [it.nextSync(), it.nextSync()].filter((e) => e !== undefined).map(([a, b]) => [a.toString(), b.toString()]);
              it.close();
              expect(got).toEqual(modelRange(model, k(op.key), 2));
            } else if (op.kind === 'scan') {
              const got = [...db.iterator({ reverse: op.reverse })].map(([a, b]) => [a.toString(), b.toString()]);
              const want = modelRange(model, undefined, Infinity);
              expect(got).toEqual(op.reverse ? want.reverse() : want);
            } else if (op.kind === 'snapshotScan') {
              const snap = db.snapshot();
              const frozen = modelRange(model, undefined, Infinity);
              db.putSync(k(0), 'after the snapshot');
              model.set(k(0), 'after the snapshot');
              const got = [...db.iterator({ snapshot: snap })].map(([a, b]) => [a.toString(), b.toString()]);
              snap.release();
              expect(got).toEqual(frozen);
            } else {
              await db.compactRange();
            }
          }
          for (const [key, v] of model) expect(text(db.getSync(key))).toBe(v);
        } finally {
          await db.close();
        }
      }),
      { numRuns: 40 },
    );
  });

  it('a kept tree does not hold the files a compaction replaced', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sievekv-iterator-reuse-'));
    dirs.push(dir);
    const db = await DB.open(dir, { writeBufferSize: 16 * 1024, maxFileSize: 16 * 1024 });
    const tables = (): string[] => readdirSync(dir).filter((n) => n.endsWith('.ldb')).sort();
    for (let round = 0; round < 3; round++) {
      const ops = Array.from({ length: 500 }, (_, i) => ({ type: 'put' as const, key: k((i * 7 + round) % 1000), value: `r${round}-${i}`.repeat(5) }));
      db.batchSync(ops);
      await db.compactRange('zzz', 'zzzz'); // flushes the memtable: tables in level 0
    }
    const before = tables();
    expect(before.length).toBeGreaterThan(1);
    // An iterator reads every table; closed, its tree (and the version naming those tables) is kept.
    const it = db.iterator({ gte: k(0), limit: 1 });
    expect(it.nextSync()).toBeDefined();
    it.close();
    await db.compactRange(); // merges them all: the old version goes, and the kept tree with it
    const after = tables();
    for (const name of before) expect(after).not.toContain(name);
    await db.close();
  });

  it('a memtable switch without a new version yet (the flush still running) is not read through the old tree', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sievekv-iterator-reuse-'));
    dirs.push(dir);
    // Real files: the flush runs on a worker, so its version comes after this synchronous code.
    const db = await DB.open(dir, { writeBufferSize: 8 * 1024 });
    let switches = 0;
    for (let i = 0; i < 400 && switches < 3; i++) {
      const it = db.iterator({ gte: k(i), limit: 1 }); // reads the tree the last one left
      const first = it.nextSync();
      it.close();
      if (i > 0) expect(first?.[0].toString()).toBe(k(i)); // written just before, maybe into a new memtable
      const files = readdirSync(dir).filter((n) => n.endsWith('.log')).length;
      db.putSync(k(i + 1), 'x'.repeat(200));
      if (readdirSync(dir).filter((n) => n.endsWith('.log')).length > files) switches++;
    }
    expect(switches).toBeGreaterThan(0);
    await db.close();
  });

  it("a database iterator whose internal iterator threw hands it back as unhealthy (not kept)", () => {
    const entries = [1, 2, 3].map((i) => ({ key: encodeInternalKey(Buffer.from(k(i)), i, ValueType.VALUE), value: Buffer.from(`v${i}`) }));
    const handed: boolean[] = [];
    const make = (failing: boolean): DBIterator => {
      const inner = new ArrayIterator(entries);
      if (failing) {
        inner.next = () => {
          throw new Error('damaged');
        };
      }
      return new DBIterator(inner, 10, undefined, false, (_: InternalIterator, healthy: boolean) => handed.push(healthy));
    };
    const ok = make(false);
    ok.seekToFirst();
    ok.next();
    ok.close();
    const bad = make(true);
    bad.seekToFirst();
    expect(() => bad.next()).toThrow('damaged');
    bad.close();
    expect(handed).toEqual([true, false]);
  });
});
