/**
 * Background work goes on under a thread that never yields to the event loop. A loop of sync
 * writes or reads (or of awaits of promises already resolved) gives worker answers no turn to
 * arrive on; the write and read paths look for them now and then (pollSync), so finished flushes
 * and merges are installed, and the next merge starts, without the caller waiting anywhere.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { key, value } from '../support/scattered-keys.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Small memtables and tables; level-0 triggers that never make a writer wait. */
const options = { writeBufferSize: 32 * 1024, maxFileSize: 32 * 1024, l0SlowdownTrigger: 1000, l0StopTrigger: 1000 };
const LIMIT_MS = 20_000;
const KEYS = 6000;

/** A closed database of KEYS keys whose level 0 (written with the trigger out of reach) is past the default trigger. */
async function levelZeroDue(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'sievekv-syncloop-'));
  dirs.push(dir);
  const db = await DB.open(dir, { ...options, l0CompactionTrigger: 1000 });
  for (let i = 0; i < KEYS; i += 100) db.batchSync(Array.from({ length: 100 }, (_, j) => ({ type: 'put' as const, key: key(i + j), value: value(i + j) })));
  await db.close();
  return dir;
}

function level(db: DB, n: number): number {
  return Number(db.getProperty(`sievekv.num-files-at-level${n}`));
}

describe('a thread that never yields', () => {
  it('a loop of batchSync installs merges as they finish', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sievekv-syncloop-'));
    dirs.push(dir);
    const db = DB.openSync(dir, options);
    const start = Date.now();
    let i = 0;
    // No wait anywhere (the triggers are out of reach): only the poll on the write path can
    // install a merge before the loop ends.
    while (level(db, 1) === 0 && Date.now() - start < LIMIT_MS) {
      db.batchSync(Array.from({ length: 100 }, () => ({ type: 'put' as const, key: key(i), value: value(i++) })));
    }
    expect(level(db, 1)).toBeGreaterThan(0);
    return db.close();
  });

  it('a loop of getSync starts and installs the merge level 0 is due for', async () => {
    const dir = await levelZeroDue();
    // Reopened with the default trigger (4), level 0 is due for a merge. Read without yielding.
    const reader = await DB.open(dir, options);
    const before = level(reader, 0);
    expect(before).toBeGreaterThanOrEqual(4);
    const start = Date.now();
    let n = 0;
    while (level(reader, 0) >= before && Date.now() - start < LIMIT_MS) {
      expect(reader.getSync(key(n % KEYS))?.toString()).toBe(value(n % KEYS));
      n++;
    }
    expect(level(reader, 0)).toBeLessThan(before);
    expect(level(reader, 1)).toBeGreaterThan(0);
    await reader.close();
  });

  it('a read-only database reading in a loop starts no merge, though level 0 is due for one', async () => {
    const dir = await levelZeroDue();
    const files = (): string => readdirSync(dir).sort().map((f) => `${f}:${statSync(join(dir, f)).size}`).join(' ');
    const before = files();
    const reader = await DB.open(dir, { ...options, readOnly: true });
    const l0 = level(reader, 0);
    expect(l0).toBeGreaterThanOrEqual(4);
    for (let n = 0; n < 5000; n++) expect(reader.getSync(key(n % KEYS))?.toString()).toBe(value(n % KEYS));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(level(reader, 0)).toBe(l0);
    await reader.close();
    expect(files()).toBe(before); // nothing written: no merge output, no MANIFEST edit
  });
});
