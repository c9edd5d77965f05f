/**
 * A writer whose memtable fills while the previous one still waits for a flush worker that has
 * not finished starting does not wait out the start-up: the flush runs on the database's thread
 * (WorkerRunner.expedite), asynchronous writers and synchronous ones alike. Here the workers never
 * say they are ready (their start-up limit is a minute), so every flush installed ran here, and a
 * writer that waited for the worker would time the test out. Merges are not run here: they stay
 * held for the worker (level 0 passes its compaction trigger, below the slowdown, and level 1
 * stays empty).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { DB } from '../../src/db.js';

vi.mock('../../src/compaction/runner.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/compaction/runner.js')>();
  class NeverReadyRunner extends original.WorkerRunner {
    constructor(options: import('../../src/compaction/runner.js').WorkerRunnerOptions = {}) {
      super({
        ...options,
        startupLimitMs: 60_000,
        startWorker: (port) => {
          port.close();
          return new Worker('setInterval(() => {}, 1000)', { eval: true, execArgv: [] });
        },
      });
    }
  }
  return { ...original, WorkerRunner: NeverReadyRunner };
});

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function openSmall(): Promise<DB> {
  const dir = mkdtempSync(join(tmpdir(), 'sievekv-expedite-'));
  dirs.push(dir);
  return DB.open(dir, { writeBufferSize: 4096 });
}

const stats = (db: DB): { flushes: number; stallsMemtableFull: number } => JSON.parse(db.getProperty('sievekv.stats') as string);
const filesAt = (db: DB, level: number): number => Number(db.getProperty(`sievekv.num-files-at-level${level}`));

/** Level 0 holds every flush; no merge ran, though one was due (held for the worker). */
function expectNoMerge(db: DB, flushes: number): void {
  expect(filesAt(db, 0)).toBe(flushes);
  expect(filesAt(db, 1)).toBe(0);
}
const value = (i: number): string => `value-${i}-`.padEnd(300, '.');
/** The i-th key written: scattered, so level-0 tables overlap and must be merged, not moved. */
const keyAt = (i: number): string => `key-${String((i * 7919) % 200).padStart(4, '0')}`;

describe('a flush while the worker still starts', () => {
  it('runs here for an asynchronous writer that needs it', async () => {
    const db = await openSmall();
    for (let i = 0; i < 200; i++) await db.put(keyAt(i), value(i));
    const { flushes, stallsMemtableFull } = stats(db);
    expect(flushes).toBeGreaterThan(5);
    expect(stallsMemtableFull).toBeGreaterThan(0); // writers did meet a full memtable with a flush pending
    expectNoMerge(db, flushes);
    for (let i = 0; i < 200; i += 7) expect(String(await db.get(keyAt(i)))).toBe(value(i));
    await db.close();
  }, 20_000);

  it('runs here for a synchronous writer that needs it', async () => {
    const db = await openSmall();
    for (let i = 0; i < 200; i++) db.putSync(keyAt(i), value(i));
    expect(stats(db).flushes).toBeGreaterThan(5);
    expectNoMerge(db, stats(db).flushes);
    for (let i = 0; i < 200; i += 7) expect(String(db.getSync(keyAt(i)))).toBe(value(i));
    await db.close();
  }, 20_000);
});
