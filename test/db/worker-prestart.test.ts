/**
 * The flush worker starts once writes begin (after the first 64 KiB), not when the first flush
 * needs it: its start-up (140-150 ms on the development machine) then overlaps the writes that
 * fill the first memtable, instead of stalling the writer that fills the second. Seen here as the
 * process gaining a thread while every write still sits in the memtable (Linux: /proc/self/task,
 * which counts this test file's process alone: vitest.config.ts runs each file in a process of
 * its own).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const threads = (): number => readdirSync('/proc/self/task').length;

/** A database opened in a fresh directory, and the process's threads counted just before the open. */
async function openCounted(): Promise<{ db: DB; before: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'sievekv-prestart-'));
  dirs.push(dir);
  await stat(dir); // the thread pool exists before the count
  const before = threads();
  return { db: await DB.open(dir, { writeBufferSize: 4 * 1024 * 1024 }), before };
}

describe.runIf(existsSync('/proc/self/task'))('the flush worker', () => {
  it('does not start at the open, nor for a few small writes', async () => {
    const { db, before } = await openCounted();
    for (let i = 0; i < 100; i++) db.putSync(`key-${i}`, 'small');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(threads()).toBeLessThanOrEqual(before); // no thread started (an earlier test's may have ended)
    await db.close();
  });

  it('starts once 64 KiB were written, with nothing to flush yet', async () => {
    const { db, before } = await openCounted();
    const value = Buffer.alloc(100, 7);
    for (let i = 0; i * 116 < 256 * 1024; i++) db.putSync(`key-${String(i).padStart(11, '0')}`, value);
    let after = threads();
    for (let waited = 0; after <= before && waited < 5000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      after = threads();
    }
    expect(Number(db.getProperty('sievekv.num-files-at-level0'))).toBe(0); // every write still in the memtable: no job asked for the worker
    await db.close();
    expect(after).toBeGreaterThan(before);
  });
});
