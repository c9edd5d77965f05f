/**
 * SIGKILL while compactions run (issue 5). A child (test/support/crash-compaction-writer.ts) writes
 * batches to a database with tiny memtables, files and level targets, so that flushes and merges
 * run on the worker threads all the time; the parent kills it after a seeded delay, then, before
 * reopening:
 *
 * - reads the child's LOG: merges it started ("compacting"), finished ("compacted"), and whether
 *   the kill landed while one was running (a "compacting" line with no end after it);
 * - replays the MANIFEST on its own (VersionSet) and checks that every table it names exists;
 *
 * then reopens the directory (an open also refuses, with CORRUPTION, a MANIFEST naming a missing
 * table) and checks with crash-batches.ts `checkRecovered` that every acknowledged batch — synced
 * or not: a SIGKILL keeps what reached the kernel — is there, none half there, each run a prefix.
 * The next child continues on the same directory, so recoveries meet the leftovers of interrupted
 * merges. The parent opens with compaction off, so the LOG it leaves has no merges of its own.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { DB } from '../../src/db.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';
import { tableFileName } from '../../src/version/filenames.js';
import { VersionSet } from '../../src/version/version-set.js';
import { checkRecovered } from '../support/crash-batches.js';
import { startWriterChild, type CrashChild } from '../support/crash-child.js';
import { rng, testSeed } from '../support/seed.js';

const WRITER = fileURLToPath(new URL('../support/crash-compaction-writer.ts', import.meta.url));
const KILLS = 22;
const PREFETCH = 3;
/** The longest wait for a child's first finished merge before it is killed anyway. */
const MERGE_WAIT_MS = 4000;
/** The parent only reads: no compaction, so its LOG lines never mix with the child's. */
const PARENT_OPTIONS = { l0CompactionTrigger: 1000, l0SlowdownTrigger: 1000, l0StopTrigger: 1000, maxBytesForLevelBase: 2 ** 40 } as const;

interface Child extends CrashChild {
  /** Resolves when the child reports its first finished merge (or exits). */
  merged: Promise<void>;
}

function startChild(dir: string, run: number, seed: number): Child {
  let mergedResolve!: () => void;
  const merged = new Promise<void>((r) => (mergedResolve = r));
  const child = startWriterChild(WRITER, [dir, String(run), String(seed)], (line) => {
    if (line.startsWith('merged ')) mergedResolve();
  });
  void child.exited.then(() => mergedResolve());
  return { ...child, merged };
}

/** What the child's LOG says about merges. */
function readLog(dir: string): { started: number; finished: number; interrupted: boolean; latched: string[] } {
  const path = join(dir, 'LOG');
  if (!existsSync(path)) return { started: 0, finished: 0, interrupted: false, latched: [] };
  const lines = readFileSync(path, 'utf8').split('\n');
  let started = 0;
  let finished = 0;
  let open = false;
  const latched: string[] = [];
  for (const line of lines) {
    if (/ compacting region /.test(line)) {
      started++;
      open = true;
    } else if (/ compacted region /.test(line) || / compaction of region .* failed/.test(line)) {
      if (/ compacted region /.test(line)) finished++;
      open = false;
    } else if (/background error latched/.test(line)) latched.push(line);
  }
  return { started, finished, interrupted: open, latched };
}

/** Table files the MANIFEST names that are not on disk (replayed independently of DB.open). */
function missingTables(dir: string): number[] {
  const fs = new NodeFileSystem();
  const versions = new VersionSet(dir, fs, 1);
  try {
    versions.recover();
    return [...versions.liveFiles()].filter((n) => !fs.exists(tableFileName(dir, n)));
  } finally {
    versions.close();
  }
}

async function readAll(db: DB): Promise<Map<string, string>> {
  const entries = new Map<string, string>();
  for await (const [k, v] of db.iterator()) entries.set(k.toString(), v.toString());
  return entries;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('SIGKILL during compactions', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sievekv-kill-compaction-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(`keeps every acknowledged batch and every table the MANIFEST names, over ${KILLS} kills`, async () => {
    const seed = testSeed();
    const next = rng(seed ^ 0xc0c0a);
    const acked: number[][] = [];
    let totalAcked = 0;
    let started = 0;
    let finished = 0;
    let interrupted = 0;
    let deepest = 0;
    const ready: Child[] = [];
    const prefetch = (run: number): void => {
      if (run < KILLS) ready.push(startChild(dir, run, seed + run));
    };
    for (let run = 0; run < PREFETCH; run++) prefetch(run);
    onTestFinished(() => {
      for (const c of ready) c.proc.kill('SIGKILL');
    });
    for (let run = 0; run < KILLS; run++) {
      const child = ready.shift()!;
      child.proc.stdin!.write('go\n');
      // Mostly once merges run: a child's worker threads take ~0.3 s each to start (tsx), more on
      // a busy machine, and only then do flushes and merges run; so wait for the child's first
      // finished merge (at most MERGE_WAIT_MS), then kill at a random moment of the merges that
      // follow. Sometimes during recovery instead.
      if (next() < 0.9) {
        await child.opened;
        await Promise.race([child.merged, sleep(MERGE_WAIT_MS)]);
        await sleep(Math.floor(next() * 500));
      } else {
        await sleep(Math.floor(next() * 100));
      }
      child.proc.kill('SIGKILL');
      const code = await child.exited;
      expect(code, `run ${run}: the child exited by itself: ${child.stderr.join('')}`).toBe(null);
      acked.push([...child.acked]);
      totalAcked += child.acked.length;
      prefetch(run + PREFETCH);

      const log = readLog(dir);
      expect(log.latched, `run ${run}: the child latched a background error`).toEqual([]);
      started += log.started;
      finished += log.finished;
      if (log.interrupted) interrupted++;
      expect(missingTables(dir), `after kill ${run}: tables the MANIFEST names but the disk lacks`).toEqual([]);

      const db = await DB.open(dir, PARENT_OPTIONS);
      try {
        const problems = checkRecovered(await readAll(db), acked);
        expect(problems.slice(0, 10), `after kill ${run} (SIEVE_SEED=${seed})`).toEqual([]);
        for (let level = 6; level > deepest; level--) {
          if (db.getProperty(`sievekv.num-files-at-level${level}`) !== '0') deepest = level;
        }
      } finally {
        await db.close();
      }
    }
    console.log(
      `crash-kill-compaction: ${KILLS} kills, ${totalAcked} acknowledged batches, ${started} merges started, ${finished} finished, ` +
        `${interrupted} kills during a merge, deepest level ${deepest}`,
    );
    // Worth something only if merges ran, reached deep levels, and kills cut some of them short.
    expect(finished).toBeGreaterThan(KILLS / 2);
    expect(deepest).toBeGreaterThanOrEqual(2);
    expect(interrupted).toBeGreaterThanOrEqual(3);
  }, 300_000); // 40-60 s on two cores; a kill may wait 4 s for a merge, more when workers start slowly
});
