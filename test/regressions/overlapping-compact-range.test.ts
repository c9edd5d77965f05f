/**
 * Issue 9, item 5: two `compactRange` calls at once picked the same inputs; the second install
 * failed its overlap check and latched CORRUPTION, refusing every write until reopen. Manual
 * compactions now queue behind each other (each runs its own range once the one before it is
 * installed), on the in-memory file system (inline jobs) and on real files (the worker).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { DB } from '../../src/db.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';
import type { FileSystem } from '../../src/fs/file-system.js';

const OPTIONS = { writeBufferSize: 4096, maxFileSize: 4096, blockSize: 1024 } as const;
const key = (i: number): string => `key${String(i).padStart(5, '0')}`;
const val = (i: number, gen: number): string => `${key(i)}:${gen}:`.padEnd(90, '.');
const N = 600;

async function scan(db: DB): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const [k, v] of db.iterator()) out.set(k.toString(), v.toString());
  return out;
}

/** A database with tables at level 0 and deeper, every key written twice, some deleted. */
async function populate(db: DB, expected: Map<string, string>): Promise<void> {
  for (let gen = 0; gen < 2; gen++) {
    for (let i = 0; i < N; i++) {
      const k = key((i * 7919) % N);
      if (gen === 1 && i % 5 === 0) {
        await db.del(k);
        expected.delete(k);
      } else {
        await db.put(k, val(i, gen));
        expected.set(k, val(i, gen));
      }
    }
    if (gen === 0) await db.compactRange();
  }
}

type Range = [string | undefined, string | undefined];

const CASES: [string, Range, Range][] = [
  ['identical whole-key-space ranges', [undefined, undefined], [undefined, undefined]],
  ['identical bounded ranges', [key(100), key(400)], [key(100), key(400)]],
  ['overlapping ranges', [key(0), key(350)], [key(250), key(599)]],
  ['a range inside the other', [undefined, undefined], [key(200), key(300)]],
];

function setups(): [string, () => { fs: FileSystem; dir: string }][] {
  return [
    ['in memory (inline jobs)', () => {
      const fs = new MemFileSystem();
      return { fs, dir: '/db' };
    }],
    ['on real files (worker jobs)', () => {
      const dir = mkdtempSync(join(tmpdir(), 'sievekv-overlap-'));
      // Registered first, so it runs after the database is closed (hooks run in reverse).
      onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
      return { fs: new NodeFileSystem(), dir };
    }],
  ];
}

describe('two compactRange calls at once (issue 9, item 5)', () => {
  for (const [where, setup] of setups()) {
    for (const [name, a, b] of CASES) {
      it(`${name}, ${where}: both resolve, nothing latched, data intact, writes go on`, async () => {
        const { fs, dir } = setup();
        const expected = new Map<string, string>();
        let db = await DB.open(dir, { ...OPTIONS, fs });
        await populate(db, expected);
        onTestFinished(() => db.close());

        await Promise.all([db.compactRange(...a), db.compactRange(...b)]);
        expect(await scan(db)).toEqual(expected);
        // Writes still work: nothing was latched.
        await db.put('after', 'compaction');
        expected.set('after', 'compaction');
        expect((await db.get('after'))?.toString()).toBe('compaction');

        // Three at once, with writes between them, then a reopen.
        const more: Promise<void>[] = [db.compactRange(...b)];
        for (let i = 0; i < 50; i++) {
          await db.put(key(i), val(i, 9));
          expected.set(key(i), val(i, 9));
        }
        more.push(db.compactRange(...a), db.compactRange());
        await Promise.all(more);
        expect(await scan(db)).toEqual(expected);
        await db.close();

        db = await DB.open(dir, { ...OPTIONS, fs });
        expect(await scan(db)).toEqual(expected);
        await db.put('reopened', 'yes');
        await db.close();
      });
    }
  }
});
