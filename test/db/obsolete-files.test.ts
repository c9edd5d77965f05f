/**
 * Obsolete files (WALs replaced by a flush, tables merged away) are removed through the file
 * system's `removeAsync` when it has one, off the writers' thread; `compactRange` and `close`
 * resolve once those removals have. A file system without `removeAsync` gets `remove`.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import type { FileSystem } from '../../src/fs/file-system.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';
import { key, value, putBatch } from '../support/scattered-keys.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const isWal = (name: string): boolean => name.endsWith('.log');
const isTable = (name: string): boolean => name.endsWith('.ldb');

describe('obsolete files', () => {
  /** A NodeFileSystem whose removeAsync takes a while, counting removals begun and finished. */
  class SlowRemoval extends NodeFileSystem {
    begun = 0;
    finished = 0;
    override async removeAsync(path: string): Promise<void> {
      this.begun++;
      await new Promise((resolve) => setTimeout(resolve, 20));
      await super.removeAsync(path);
      this.finished++;
    }
  }

  const walsAndTables = (dir: string): string[] => readdirSync(dir).filter((n) => isWal(n) || isTable(n));

  it('go through removeAsync; compactRange and close resolve once they are gone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sievekv-wal-switch-'));
    dirs.push(dir);
    const fs = new SlowRemoval();
    const db = await DB.open(dir, { fs, writeBufferSize: 32 * 1024, maxFileSize: 32 * 1024 });
    for (let i = 0; i < 6000; i += 100) await db.batch(putBatch(i, 100));
    const live = (): number => [0, 1, 2, 3].reduce((n, level) => n + Number(db.getProperty(`sievekv.num-files-at-level${level}`)), 0);
    await db.compactRange(undefined, undefined);
    // One WAL (the fresh one) and the live tables: nothing obsolete left behind.
    expect(walsAndTables(dir).filter(isWal)).toHaveLength(1);
    expect(walsAndTables(dir).filter(isTable)).toHaveLength(live());
    for (let i = 6000; i < 9000; i += 100) await db.batch(putBatch(i, 100));
    await db.close();
    expect(fs.begun).toBeGreaterThan(10);
    expect(fs.finished, 'close resolved with removals under way').toBe(fs.begun);
    const reopened = await DB.open(dir);
    expect(reopened.getSync(key(8999))?.toString()).toBe(value(8999));
    expect(reopened.getSync(key(1))?.toString()).toBe(value(1));
    await reopened.close();
  });

  it('are removed while a thread that never yields goes on writing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sievekv-wal-switch-'));
    dirs.push(dir);
    const db = await DB.open(dir, { writeBufferSize: 32 * 1024, maxFileSize: 32 * 1024 });
    const wals = (): number => readdirSync(dir).filter(isWal).length;
    const sleep = new Int32Array(new SharedArrayBuffer(4));
    let most = 0;
    // No await from here to the end of the loop: the removals' callbacks never run, the unlinks must not need them.
    for (let i = 0; i < 20_000; i += 100) {
      db.batchSync(putBatch(i, 100));
      if (i % 2000 === 1900) {
        let n = wals();
        for (let tries = 0; n > 3 && tries < 2000; tries++, n = wals()) Atomics.wait(sleep, 0, 0, 5);
        most = Math.max(most, n);
      }
    }
    expect(most, 'WAL files present at a look, the loop not having yielded').toBeLessThanOrEqual(3);
    await db.close();
  });

  it('go through remove on a file system without removeAsync', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sievekv-wal-switch-'));
    dirs.push(dir);
    const inner = new NodeFileSystem();
    let removed = 0;
    const fs = new Proxy(inner, {
      get(target, prop) {
        if (prop === 'removeAsync') return undefined;
        if (prop === 'remove') {
          return (path: string) => {
            removed++;
            target.remove(path);
          };
        }
        const v = Reflect.get(target, prop) as unknown;
        return typeof v === 'function' ? (v as (...args: unknown[]) => unknown).bind(target) : v;
      },
    }) as FileSystem;
    const db = await DB.open(dir, { fs, writeBufferSize: 32 * 1024, maxFileSize: 32 * 1024 });
    for (let i = 0; i < 3000; i += 100) db.batchSync(putBatch(i, 100));
    await db.compactRange(undefined, undefined);
    expect(walsAndTables(dir).filter(isWal)).toHaveLength(1);
    await db.close();
    expect(removed).toBeGreaterThan(5);
  });
});
