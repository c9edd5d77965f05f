/**
 * Options.backgroundPriority: with 'low' the worker thread lowers its own CPU
 * priority, nice +10 over the process's (Linux: each thread has its own nice value, field 19 of
 * /proc/self/task/<tid>/stat); with 'normal' (the default) it keeps the process's.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import type { BackgroundPriority } from '../../src/index.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** The nice value of each thread of this process but those in `except`. */
function threadNices(except: ReadonlySet<string>): number[] {
  const nices: number[] = [];
  for (const tid of readdirSync('/proc/self/task')) {
    if (except.has(tid)) continue;
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      nices.push(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    } catch {
      // the thread ended meanwhile
    }
  }
  return nices;
}

/**
 * Opens a database with one worker, has the worker run a flush, and returns the nice values of the
 * threads started since (an earlier test's worker may still be ending).
 */
async function nicesWithWorker(backgroundPriority?: BackgroundPriority): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sievekv-priority-'));
  dirs.push(dir);
  const earlier = new Set(readdirSync('/proc/self/task'));
  const db = await DB.open(dir, { backgroundThreads: 1, ...(backgroundPriority === undefined ? {} : { backgroundPriority }) });
  for (let i = 0; i < 1000; i++) db.putSync(`key-${String(i).padStart(11, '0')}`, 'value');
  // The flush runs on the worker (once it is ready: nothing is stalled), so its module has run.
  await db.compactRange();
  const nices = threadNices(earlier);
  await db.close();
  return nices;
}

describe.runIf(existsSync('/proc/thread-self'))('the worker thread\'s CPU priority', () => {
  const base = getPriority();

  it.runIf(base <= 9)('is 10 nice steps below the process\'s with backgroundPriority \'low\'', async () => {
    const nices = await nicesWithWorker('low');
    expect(nices.filter((n) => n === base + 10)).toHaveLength(1); // the worker
    expect(nices.filter((n) => n !== base + 10).every((n) => n === base)).toBe(true);
  }, 20_000);

  for (const priority of ['normal', undefined] as const) {
    it(`is the process's with backgroundPriority ${priority ?? 'unset (the default)'}`, async () => {
      const nices = await nicesWithWorker(priority);
      expect(nices.length).toBeGreaterThan(0); // the worker, at least
      expect(nices.every((n) => n === base)).toBe(true);
    }, 20_000);
  }
});
