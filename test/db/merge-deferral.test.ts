/**
 * Merges no writer waits for wait while the database is being read (Options.deferMergesDuringReads,
 * db/merge-deferral.ts). The decision alone: against a model of its rule, under any sequence of
 * looks, reads and writes. A database: a due merge between deeper levels does not start while a
 * loop of getSync reads, starts once the reads pause, and starts at once when a write comes; with
 * the option off it starts during the reads. (A read-only database starts none: sync-loop-progress.test.ts.)
 */
import fc from 'fast-check';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { assumeMergeRate, deferralLimitMs, GRACE_MS, LIMIT_MS, MERGE_BYTES_PER_MS, MergeDeferral } from '../../src/db/merge-deferral.js';
import { key, value } from '../support/scattered-keys.js';

describe('deferralLimitMs', () => {
  it('is about as long as the merge would run, between the grace period and its cap', () => {
    expect(deferralLimitMs(10 * MERGE_BYTES_PER_MS)).toBe(GRACE_MS);
    expect(deferralLimitMs(1000 * MERGE_BYTES_PER_MS)).toBe(1000);
    expect(deferralLimitMs(1e12)).toBe(LIMIT_MS);
    assumeMergeRate(MERGE_BYTES_PER_MS / 10);
    expect(deferralLimitMs(100 * MERGE_BYTES_PER_MS)).toBe(1000);
    assumeMergeRate(MERGE_BYTES_PER_MS);
  });
});

describe('MergeDeferral', () => {
  it('puts a merge off for a grace period, starts it after one without reads', () => {
    const d = new MergeDeferral();
    expect(d.decide(1000, 5, 10, 1000)).toBe(GRACE_MS);
    expect(d.waiting).toBe(true);
    expect(d.decide(1000 + GRACE_MS - 1, 5, 10, 1000)).toBe(1);
    expect(d.decide(1000 + GRACE_MS, 5, 10, 1000)).toBe(0);
    expect(d.waiting).toBe(false);
  });

  it('keeps putting it off while reads come, up to its limit', () => {
    const d = new MergeDeferral();
    let reads = 0;
    expect(d.decide(0, reads, 10, 300)).toBe(GRACE_MS);
    for (let t = GRACE_MS; t < 300; t += GRACE_MS) expect(d.decide(t, (reads += 100), 10, 300)).toBeGreaterThan(0);
    expect(d.decide(300, (reads += 100), 10, 300)).toBe(0);
  });

  it('starts it at once after a write (the sequence moved), and the first look is only the baseline', () => {
    const d = new MergeDeferral();
    expect(d.decide(0, 0, 10, 5000)).toBeGreaterThan(0);
    expect(d.decide(10, 50, 11, 5000)).toBe(0);
    // The next merge waits afresh.
    expect(d.decide(20, 60, 11, 5000)).toBe(GRACE_MS);
  });

  it('counts a write after the sequence it was told of (the open\'s), even at its first look', () => {
    const d = new MergeDeferral();
    d.observe(10);
    expect(d.decide(0, 0, 12, 5000)).toBe(0);
    const idle = new MergeDeferral();
    idle.observe(10);
    expect(idle.decide(0, 0, 10, 5000)).toBe(GRACE_MS);
  });

  it('asks to look again no later than its limit', () => {
    const d = new MergeDeferral();
    expect(d.decide(0, 0, 1, 20)).toBe(GRACE_MS);
    expect(d.decide(10, 1, 1, 20)).toBe(10);
  });

  it('never starts a merge before its limit while every look finds new reads and no write (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 100 }), fc.integer({ min: 60, max: 2000 }), (gaps, limit) => {
        const d = new MergeDeferral();
        d.observe(7);
        let now = 0;
        let reads = 0;
        let first = -1;
        for (const gap of gaps) {
          now += gap;
          const wait = d.decide(now, ++reads, 7, limit);
          if (first < 0) first = now;
          if (now - first < limit) expect(wait).toBeGreaterThan(0);
          else return; // may start from here on
        }
      }),
      { numRuns: 300 },
    );
  });

  it('starts a merge within two grace periods and two looks of the last read (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 10 }), { minLength: 1, maxLength: 200 }), fc.integer({ min: 0, max: 200 }), (gaps, readLooks) => {
        const d = new MergeDeferral();
        d.observe(7);
        let now = 0;
        let reads = 0;
        let lastRead = 0;
        for (let i = 0; ; i++) {
          now += gaps[i % gaps.length]!;
          if (i < readLooks) {
            reads++;
            lastRead = now;
          }
          if (d.decide(now, reads, 7, 1e9) === 0) break;
          expect(now).toBeLessThanOrEqual(lastRead + 2 * GRACE_MS + 2 * 10);
        }
        expect(now).toBeLessThanOrEqual(lastRead + 2 * GRACE_MS + 2 * 10);
      }),
      { numRuns: 300 },
    );
  });

  it('follows its rule under any looks, reads and writes (a model)', () => {
    const look = fc.record({ dt: fc.integer({ min: 0, max: 120 }), reads: fc.integer({ min: 0, max: 3 }), write: fc.boolean(), limit: fc.integer({ min: 1, max: 400 }) });
    fc.assert(
      fc.property(fc.array(look, { maxLength: 80 }), (looks) => {
        const d = new MergeDeferral();
        let now = 0;
        let reads = 0;
        let sequence = 100;
        let first = true;
        // The model: when the current wait began, and the reads and time at its grace period's start.
        let since = -1;
        let readsAt = 0;
        let checkedAt = 0;
        for (const l of looks) {
          now += l.dt;
          reads += l.reads;
          const wrote = l.write && !first;
          if (l.write) sequence++;
          first = false;
          const wait = d.decide(now, reads, sequence, l.limit);
          let expected: 'start' | 'wait';
          if (wrote) expected = 'start';
          else if (since < 0) {
            expected = 'wait';
            since = now;
            readsAt = reads;
            checkedAt = now;
          } else if (now - since >= l.limit) expected = 'start';
          else if (now - checkedAt >= GRACE_MS && reads === readsAt) expected = 'start';
          else {
            expected = 'wait';
            if (now - checkedAt >= GRACE_MS) {
              readsAt = reads;
              checkedAt = now;
            }
          }
          if (expected === 'start') {
            expect(wait).toBe(0);
            since = -1;
          } else {
            expect(wait).toBeGreaterThanOrEqual(1);
            expect(wait).toBeLessThanOrEqual(GRACE_MS);
            expect(now - since + wait).toBeLessThanOrEqual(Math.max(l.limit, GRACE_MS));
          }
          expect(d.waiting).toBe(since >= 0);
        }
      }),
      { numRuns: 300 },
    );
  });
});

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const KEYS = 4000;
/** Small tables, a level 1 target of 16 KiB, level 0 never due. */
const options = { writeBufferSize: 32 * 1024, maxFileSize: 16 * 1024, maxBytesForLevelBase: 16 * 1024, l0CompactionTrigger: 1000, l0SlowdownTrigger: 1000, l0StopTrigger: 1000 };
const puts = (round: number) => Array.from({ length: KEYS }, (_, i) => ({ type: 'put' as const, key: key(i), value: `${value(i)}.${round}` }));

/**
 * A closed database whose level 1 (every key's newer value) is many times its target over a
 * level 2 holding the older ones: opened with `options`, a merge into level 2 is due (not a move:
 * the levels overlap).
 */
async function levelOneOverTarget(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'sievekv-deferral-'));
  dirs.push(dir);
  let db = await DB.open(dir, { ...options, maxBytesForLevelBase: 1 << 30 });
  db.batchSync(puts(0));
  await db.compactRange(); // level 1
  await db.close();
  db = await DB.open(dir, options); // the tables move to level 2 (nothing below them)
  await until(() => level(db, 2) > 0);
  await db.close();
  db = await DB.open(dir, { ...options, maxBytesForLevelBase: 1 << 30, l0CompactionTrigger: 1 });
  for (let i = 0; i < KEYS; i += 500) db.batchSync(puts(1).slice(i, i + 500));
  await until(() => level(db, 0) === 0);
  await db.close();
  return dir;
}

function level(db: DB, n: number): number {
  return Number(db.getProperty(`sievekv.num-files-at-level${n}`));
}

/** Merges into `level` since the open. */
function mergesInto(db: DB, n: number): number {
  const levels = (JSON.parse(db.getProperty('sievekv.stats')!) as { levels: { level: number; compactions: number }[] }).levels;
  return levels.find((l) => l.level === n)?.compactions ?? 0;
}

/** Merges into level 2 started since the open (the LOG names each as it starts). */
function mergesStarted(dir: string): number {
  return readFileSync(join(dir, 'LOG'), 'utf8').split('\n').filter((l) => /compacting region \d+: \d+@1 \+ \d+@2/.test(l)).length;
}

/** getSync in a loop for `ms`, every value checked. */
function readFor(db: DB, ms: number): void {
  const until = Date.now() + ms;
  for (let n = 0; Date.now() < until; n++) expect(db.getSync(key(n % KEYS))?.toString()).toBe(`${value(n % KEYS)}.1`);
}

/**
 * getSync in a loop that never yields (so no pause in the reads is seen) until a merge into level 2
 * has started, for at most half a merge's longest wait: one that starts did not wait its limit out.
 */
function readUntilAMergeStarts(db: DB, dir: string): void {
  const start = Date.now();
  while (mergesStarted(dir) === 0 && Date.now() - start < LIMIT_MS / 2) readFor(db, 20);
}

async function until(done: () => boolean, limitMs = 20_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('a database being read', () => {
  // The tests' merges read ~100-300 KB: at this rate they wait up to the cap, 5 s, as a merge of
  // 125 MB would at the assumed rate. Restored after.
  beforeAll(() => assumeMergeRate(50));
  afterAll(() => assumeMergeRate(MERGE_BYTES_PER_MS));

  it('puts off a due merge between deeper levels while getSync reads, and runs it once the reads pause', async () => {
    const dir = await levelOneOverTarget();
    const db = await DB.open(dir, options);
    expect(level(db, 1)).toBeGreaterThan(4);
    expect(level(db, 2)).toBeGreaterThan(0);
    readFor(db, 600); // polls for finished work and due merges every 1,024 gets
    expect(mergesStarted(dir)).toBe(0);
    await until(() => mergesInto(db, 2) > 0);
    expect(mergesInto(db, 2)).toBeGreaterThan(0);
    readFor(db, 50);
    await db.close();
  });

  it('runs it at once when a write comes', async () => {
    const dir = await levelOneOverTarget();
    const db = await DB.open(dir, options);
    readFor(db, 200);
    expect(mergesStarted(dir)).toBe(0);
    db.putSync(key(0), `${value(0)}.1`);
    // The next look (a poll, within 1,024 gets) finds the write: the merge starts while the reads
    // go on, long before its limit.
    readUntilAMergeStarts(db, dir);
    expect(mergesStarted(dir)).toBeGreaterThan(0);
    await until(() => mergesInto(db, 2) > 0);
    expect(mergesInto(db, 2)).toBeGreaterThan(0);
    await db.close();
  });

  it("with deferMergesDuringReads false, runs it while getSync reads (LevelDB's way)", async () => {
    const dir = await levelOneOverTarget();
    const db = await DB.open(dir, { ...options, deferMergesDuringReads: false });
    readUntilAMergeStarts(db, dir);
    expect(mergesStarted(dir)).toBeGreaterThan(0);
    await until(() => mergesInto(db, 2) > 0);
    expect(mergesInto(db, 2)).toBeGreaterThan(0);
    await db.close();
  });

  it('rejects a deferMergesDuringReads that is not a boolean', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sievekv-deferral-'));
    dirs.push(dir);
    await expect(DB.open(dir, { deferMergesDuringReads: 'yes' as unknown as boolean })).rejects.toThrow(/deferMergesDuringReads/);
  });
});
