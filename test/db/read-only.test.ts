/**
 * `DB.open(dir, { readOnly: true })` and `refresh()`: a reader in this process, a writer in a
 * child process (read-only-writer.ts) holding the database open and writing, flushing and
 * compacting. The reader sees exactly the state of its open (or last refresh), writes nothing at
 * all (no file-system call that writes; the directory byte-identical), refuses every write with
 * NOT_SUPPORTED, and never returns a wrong value when the writer deletes the tables it read.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { isSieveError, SieveError } from '../../src/errors.js';
import type { FileSystem } from '../../src/fs/file-system.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';
import { JumpRouter } from '../../src/shard/jump-router.js';
import { Writer, writerCleanup } from '../support/writer-channel.js';
import { writerKey, writerValue } from './read-only-writer.js';


const { children, temp } = writerCleanup();

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sievekv-ro-'));
  temp.push(d);
  return join(d, 'db');
}

type Model = Map<string, string>;

/** Everything the database shows: a full iteration, checked against a get of each key. */
function contents(db: DB): Model {
  const out: Model = new Map();
  for (const [k, v] of db.iterator()) out.set(k.toString(), v.toString());
  for (const [k, v] of out) expect(db.getSync(k)?.toString()).toBe(v);
  return out;
}

/**
 * `contents` once the writer's background work left the tables alone: the writer's last command
 * has returned, but a merge it started may still delete tables the reader's version names (a
 * typed IO_ERROR); then the reader refreshes and reads again.
 */
async function settledContents(db: DB): Promise<Model> {
  for (let tries = 0; ; tries++) {
    try {
      return contents(db);
    } catch (err) {
      if (!isSieveError(err, 'IO_ERROR') || tries >= 100) throw err;
      await new Promise((resolve) => setTimeout(resolve, 50));
      await db.refresh();
    }
  }
}

/** The model as a sorted copy (Maps compare by insertion order in toEqual). */
function sorted(model: Model): Model {
  return new Map([...model.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Every file under `dir` (recursively) → size and sha256: the directory's bytes. */
function image(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string, prefix: string): void => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path, `${prefix}${name}/`);
      else out.set(`${prefix}${name}`, `${statSync(path).size} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`);
    }
  };
  walk(dir, '');
  return out;
}

/** A NodeFileSystem that records every call that could change the disk. */
function recordingFs(): { fs: FileSystem; writes: string[] } {
  const writes: string[] = [];
  const inner = new NodeFileSystem();
  const mutating = new Set(['createWritable', 'openAppendable', 'mkdir', 'rename', 'remove', 'syncDir', 'lock']);
  const fs = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (mutating.has(String(prop))) writes.push(`${String(prop)} ${String(args[0])}`);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { fs, writes };
}

const tables = (dir: string): string[] => readdirSync(dir).filter((f) => f.endsWith('.ldb'));

describe('read-only open next to a writer in another process', () => {
  it('sees the state of its open, nothing after until refresh(), then the writer’s state; survives the writer’s compaction', async () => {
    const dir = tempDir();
    const writer = await Writer.start(dir, children);
    await writer.command('put 0 3000 a'); // flushes, compactions, a live WAL
    await writer.command('del 100 200');
    const atOpen = sorted(writer.model);

    const reader = await DB.open(dir, { readOnly: true });
    try {
      expect(contents(reader)).toEqual(atOpen);
      expect(reader.getSync(writerKey(150))).toBeUndefined();

      await writer.command('put 2500 4000 b');
      await writer.command('del 0 50');
      // Nothing written after the open is seen: old values, deleted keys still there, no new keys.
      expect(contents(reader)).toEqual(atOpen);
      expect(reader.getSync(writerKey(3500))).toBeUndefined();
      expect(reader.getSync(writerKey(10))?.toString()).toBe(writerValue('a', 10));
      expect(reader.getSync(writerKey(2600))?.toString()).toBe(writerValue('a', 2600));

      await reader.refresh();
      const afterRefresh = sorted(writer.model);
      expect(contents(reader)).toEqual(afterRefresh);
      expect(reader.getSync(writerKey(10))).toBeUndefined();
      expect(reader.getSync(writerKey(3500))?.toString()).toBe(writerValue('b', 3500));

      // The writer's compaction deletes the tables the reader has open: it reads on through them.
      const before = tables(dir);
      await writer.command('compact');
      const gone = before.filter((f) => !existsSync(join(dir, f)));
      expect(gone.length).toBeGreaterThan(0);
      expect(contents(reader)).toEqual(afterRefresh);

      await writer.command('put 4000 4200 c');
      await reader.refresh();
      expect(contents(reader)).toEqual(sorted(writer.model));
      expect(reader.getSync(writerKey(4100))?.toString()).toBe(writerValue('c', 4100));
    } finally {
      await reader.close();
    }
    await writer.close();
  });

  it('a reader whose table handles were closed (maxOpenFiles 10) reads the right value or a typed error, never a wrong one', async () => {
    const dir = tempDir();
    const writer = await Writer.start(dir, children);
    await writer.command('put 0 6000 a');
    await writer.command('del 1000 1500');
    const model = sorted(writer.model);
    const reader = await DB.open(dir, { readOnly: true, maxOpenFiles: 10, tableFileCacheSize: 0, blockCacheSize: 0 });
    try {
      expect(await settledContents(reader)).toEqual(model);
      expect(tables(dir).length).toBeGreaterThan(10);
      await writer.command('put 0 6000 b');
      await writer.command('compact');
      let right = 0;
      let typed = 0;
      for (let i = 0; i < 6000; i++) {
        try {
          expect(reader.getSync(writerKey(i))?.toString()).toBe(model.get(writerKey(i)));
          right++;
        } catch (err) {
          if (!(err instanceof SieveError)) throw err;
          expect(err.code).toBe('IO_ERROR');
          expect(err.message).toMatch(/\d{6}\.ldb/);
          typed++;
        }
      }
      expect(right).toBeGreaterThan(0);
      expect(right + typed).toBe(6000);
      // An iteration yields right entries until it stops with a typed error, if it does.
      const seen: [string, string][] = [];
      try {
        for (const [k, v] of reader.iterator()) seen.push([k.toString(), v.toString()]);
        expect(seen).toEqual([...model.entries()]);
      } catch (err) {
        if (!isSieveError(err)) throw err;
        expect(seen).toEqual([...model.entries()].slice(0, seen.length));
      }
      await reader.refresh();
      expect(contents(reader)).toEqual(sorted(writer.model));
    } finally {
      await reader.close();
    }
    await writer.close();
  });

  it('refresh() while the writer writes, flushes and compacts: every state seen is the writer’s after some whole batch', async () => {
    const dir = tempDir();
    const writer = await Writer.start(dir, children);
    await writer.command('put 0 6000 a');
    const reader = await DB.open(dir, { readOnly: true });
    try {
      /** Refreshes the reader and checks what it sees; returns m, the keys [0, m) the batches applied so far rewrote. */
      const look = async (): Promise<number> => {
        await reader.refresh();
        const view = contents(reader);
        // The batches applied so far are keys [0, m) with value b, all else still a.
        let m = 0;
        while (m < 6000 && view.get(writerKey(m)) === writerValue('b', m)) m++;
        expect(m % 50 === 0 || m === 6000, `a state after ${m} keys is inside a batch`).toBe(true);
        for (let i = m; i < 6000; i++) expect(view.get(writerKey(i))).toBe(writerValue('a', i));
        expect(view.size).toBe(6000);
        return m;
      };
      // Half the batches first: a state between the writer's first and last batch, seen however
      // slowly this process runs beside the writer.
      await writer.command('put 0 3000 b');
      const seen = new Set<number>([await look()]);
      expect(seen.has(3000)).toBe(true);
      const done = writer.command('put 3000 6000 b'); // 60 more batches of 50 keys, in key order
      let finished = false;
      void done.then(() => (finished = true));
      let refreshes = 1;
      for (;;) {
        const last = finished;
        const m = await look();
        refreshes++;
        seen.add(m);
        if (last) {
          expect(m).toBe(6000);
          break;
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
      await done;
      expect(refreshes).toBeGreaterThan(1);
      expect(seen.size).toBeGreaterThan(1); // it saw the writer before its last batch
    } finally {
      await reader.close();
    }
    await writer.close();
  });

  it('writes nothing: no file-system call that writes, and the directory byte-identical after a whole session', async () => {
    const dir = tempDir();
    const writer = await Writer.start(dir, children);
    await writer.command('put 0 2000 a');
    await writer.command('compact'); // then idle: nothing over its size targets
    await writer.command('put 2000 2100 b'); // in the live WAL only
    const before = image(dir);
    expect([...before.keys()].some((f) => f.endsWith('.log'))).toBe(true);

    const { fs, writes } = recordingFs();
    const reader = await DB.open(dir, { readOnly: true, fs });
    expect(contents(reader)).toEqual(sorted(writer.model));
    const snap = reader.snapshot();
    expect(reader.getSync(writerKey(2050), { snapshot: snap })?.toString()).toBe(writerValue('b', 2050));
    snap.release();
    reader.getProperty('sievekv.stats');
    await reader.refresh();
    await expect(reader.put('x', 'y')).rejects.toMatchObject({ code: 'NOT_SUPPORTED' });
    await reader.close();

    expect(writes).toEqual([]);
    expect(image(dir)).toEqual(before);
    await writer.close();
  });
});

describe('read-only open of a closed database', () => {
  async function closedDb(): Promise<{ dir: string; model: Model }> {
    const dir = tempDir();
    const model: Model = new Map();
    const db = await DB.open(dir, { writeBufferSize: 16 * 1024 });
    for (let i = 0; i < 1500; i++) {
      await db.put(writerKey(i), writerValue('a', i));
      model.set(writerKey(i), writerValue('a', i));
    }
    await db.close();
    return { dir, model: sorted(model) };
  }

  it('every write, sync twin and compactRange is NOT_SUPPORTED; refresh() on a writable database too', async () => {
    const { dir, model } = await closedDb();
    const db = await DB.open(dir, { readOnly: true });
    try {
      const refused = (p: Promise<unknown>): Promise<void> => expect(p).rejects.toMatchObject({ code: 'NOT_SUPPORTED' });
      await refused(db.put('k', 'v'));
      await refused(db.del(writerKey(1)));
      await refused(db.batch([{ type: 'put', key: 'k', value: 'v' }]));
      await refused(db.batch().put('k', 'v').write());
      await refused(db.clear({ gte: writerKey(0), lt: writerKey(10) }));
      await refused(db.compactRange());
      const refusedSync = (fn: () => unknown): void => {
        expect(fn).toThrow(expect.objectContaining({ code: 'NOT_SUPPORTED' }) as unknown as Error);
      };
      refusedSync(() => db.putSync('k', 'v'));
      refusedSync(() => db.delSync(writerKey(1)));
      refusedSync(() => db.batchSync([{ type: 'del', key: writerKey(1) }]));
      refusedSync(() => db.batch().put('k', 'v').writeSync());
      refusedSync(() => db.clearSync({ gte: writerKey(0), lt: writerKey(10) }));
      expect(contents(db)).toEqual(model);
    } finally {
      await db.close();
    }
    const writable = await DB.open(dir);
    try {
      await expect(writable.refresh()).rejects.toMatchObject({ code: 'NOT_SUPPORTED' });
    } finally {
      await writable.close();
    }
  });

  it('a missing database is INVALID_ARGUMENT and nothing is created; readOnly with errorIfExists is refused', async () => {
    const dir = tempDir();
    await expect(DB.open(dir, { readOnly: true })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringMatching(/does not exist/) as unknown });
    expect(existsSync(dir)).toBe(false);
    const { dir: existing } = await closedDb();
    expect(() => DB.openSync(existing, { readOnly: true, errorIfExists: true })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }) as unknown as Error);
  });

  it('takes no lock: opens while a writer in this process holds the database, and a writer opens while it is open', async () => {
    const { dir, model } = await closedDb();
    const writer = await DB.open(dir);
    const reader = DB.openSync(dir, { readOnly: true });
    await writer.close();
    const second = await DB.open(dir); // the reader holds nothing
    await second.close();
    expect(contents(reader)).toEqual(model);
    await reader.close();
  });

  it('a sharded database: every region read, the router checked, nothing written', async () => {
    const dir = tempDir();
    const model: Model = new Map();
    const db = await DB.open(dir, { router: new JumpRouter(3), writeBufferSize: 16 * 1024 });
    for (let i = 0; i < 2000; i++) {
      await db.put(writerKey(i), writerValue('s', i));
      model.set(writerKey(i), writerValue('s', i));
    }
    await db.close();
    const before = image(dir);
    const reader = await DB.open(dir, { readOnly: true, router: new JumpRouter(3) });
    try {
      expect(contents(reader)).toEqual(sorted(model));
    } finally {
      await reader.close();
    }
    await expect(DB.open(dir, { readOnly: true })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(image(dir)).toEqual(before);
  });

  it('a torn WAL tail is read up to the tear and left as it is', async () => {
    const { dir, model } = await closedDb();
    const wal = readdirSync(dir).filter((f) => f.endsWith('.log')).sort().pop()!;
    const path = join(dir, wal);
    expect(statSync(path).size).toBeGreaterThan(100);
    truncateSync(path, statSync(path).size - 5); // the last record cut short
    const before = image(dir);
    const db = await DB.open(dir, { readOnly: true });
    try {
      const seen = contents(db);
      const last = [...model.keys()].pop()!;
      expect(seen.has(last)).toBe(false); // the cut record's key
      model.delete(last);
      expect(seen).toEqual(model);
      expect(JSON.parse(db.getProperty('sievekv.stats')!).walTornBytes).toBeGreaterThan(0);
    } finally {
      await db.close();
    }
    expect(image(dir)).toEqual(before);
  });

  it('refresh() with a snapshot held is INVALID_ARGUMENT; an iterator opened before a refresh keeps its state', async () => {
    const dir = tempDir();
    const writer = await Writer.start(dir, children);
    await writer.command('put 0 500 a');
    const first = sorted(writer.model);
    const reader = await DB.open(dir, { readOnly: true });
    try {
      const snap = reader.snapshot();
      await writer.command('put 0 500 b');
      await expect(reader.refresh()).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      expect(reader.getSync(writerKey(7), { snapshot: snap })?.toString()).toBe(writerValue('a', 7));
      snap.release();
      const it = reader.iterator();
      await reader.refresh();
      const old = new Map<string, string>();
      for (const [k, v] of it) old.set(k.toString(), v.toString());
      expect(old).toEqual(first);
      expect(contents(reader)).toEqual(sorted(writer.model));
    } finally {
      await reader.close();
    }
    await writer.close();
  });
});
