/**
 * The model tests on real files, where flushes and compactions run on worker threads (issue 9:
 * "the worker-thread path gets the same model test as the in-memory one"). The same command sets
 * as on MemFileSystem, every kind included:
 *
 * - db-model.ts's commands: writes of every kind (async and sync twins — which block on a job
 *   running in a worker — synced or not, several at once), gets, scans with bounds, seeks and
 *   writes while open, snapshots, flushes (compactRange) and close-and-reopen; with one region or
 *   three;
 * - db-model-compaction.ts's commands: fills with turns of the event loop (so a worker's job
 *   installs while writes go on), compactRange of sub-ranges, held snapshots checked across
 *   compactions, reopen, and reopen with another filter policy and compression; one region or
 *   three.
 *
 * Each run checks that its jobs ran on workers (the LOG never says a worker could not start and
 * the jobs fell back to the database's thread), and the totals must show flushes and compactions
 * on workers, level 2 or deeper reached.
 *
 * Cost: every open starts its workers afresh (each ~0.3–1 s from TypeScript sources on a loaded
 * two-core machine) and reopen is among the commands, so CI runs fewer, longer runs than the
 * in-memory tests (6 and 4 runs of up to 120 and 40 commands: 30–60 s in all). Long runs:
 * SIEVE_WORKER_MODEL_RUNS=N runs each property N times (e.g. 100). A failure is not shrunk unless
 * SIEVE_WORKER_MODEL_SHRINK=1 (see below). The directories are on /dev/shm when it exists (tmpfs: real files and real
 * system calls, without waiting for a disk — no crash is simulated here, so durability is not
 * what is tested); SIEVE_MODEL_DIR puts them elsewhere.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { OpenOptions } from '../../src/db.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';
import type { RegionRouter } from '../../src/shard/region-router.js';
import { compactionCommandArb, compactionOptionsArb, runCompactionModel } from './db-model-compaction.js';
import { commandArb, ModelRun, optionsArb, type Command } from './db-model.js';

function envRuns(fallback: number): number {
  const raw = process.env.SIEVE_WORKER_MODEL_RUNS;
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`SIEVE_WORKER_MODEL_RUNS must be a positive integer, got ${raw}`);
  return n;
}

const MODEL_RUNS = envRuns(6);
const COMPACTION_RUNS = envRuns(4);
/**
 * Shrinking re-runs the property dozens of times, each on real files with fresh workers: minutes.
 * A failure is reported as found (fast-check prints the seed and path to replay it); set
 * SIEVE_WORKER_MODEL_SHRINK=1 to shrink it.
 */
const endOnFailure = process.env.SIEVE_WORKER_MODEL_SHRINK === undefined;
/** Generous per run (a run holds a few reopens, each starting workers), and scaled for long runs. */
const timeoutFor = (runs: number): number => Math.max(120_000, runs * 30_000);

const base = process.env.SIEVE_MODEL_DIR ?? (existsSync('/dev/shm') ? '/dev/shm' : tmpdir());
const root = mkdtempSync(join(base, 'sievekv-wmodel-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const fs = new NodeFileSystem();
const threeRegions: RegionRouter = {
  name: 'test.first-byte-mod-3',
  regions: [0, 1, 2],
  regionOf: (key) => (key.length === 0 ? 0 : key[0]! % 3),
};

/** The database's LOG, and the one before it (each open starts a new LOG). */
function infoLog(dir: string): string {
  return ['LOG.old', 'LOG']
    .map((name) => join(dir, name))
    .filter((path) => existsSync(path))
    .map((path) => readFileSync(path, 'utf8'))
    .join('\n');
}

/** Figures of the runs of one property: what ran on the workers. */
interface Totals {
  runs: number;
  commands: number;
  reopens: number;
  /** Counted by the model runs only (the compaction runner does not report them). */
  flushes?: number;
  compactions: number;
  deepest: number;
  ms: number;
}

const emptyTotals = (): Totals => ({ runs: 0, commands: 0, reopens: 0, compactions: 0, deepest: 0, ms: 0 });

function show(what: string, t: Totals): void {
  console.log(
    `${what}: ${t.runs} runs, ${t.commands} commands (${t.reopens} reopens), ${t.flushes === undefined ? '' : `${t.flushes} flushes and `}` +
      `${t.compactions} compactions on workers, ` +
      `deepest level ${t.deepest}, ${(t.ms / 1000).toFixed(1)} s`,
  );
}

/** Counts the flushes and compactions of every session (the counters restart at each open). */
class WorkerModelRun extends ModelRun {
  flushes = 0;
  compactions = 0;
  deepest = 0;

  override async close(): Promise<void> {
    const stats = JSON.parse(this.db.getProperty('sievekv.stats')!) as { flushes: number; levels: { level: number; compactions: number; files: number }[] };
    this.flushes += stats.flushes;
    this.compactions += stats.levels.reduce((s, l) => s + l.compactions, 0);
    this.deepest = Math.max(this.deepest, ...stats.levels.filter((l) => l.files > 0).map((l) => l.level));
    await super.close();
  }
}

/** No job fell back to the database's thread: the worker path is what ran. */
function expectWorkers(dir: string): void {
  const log = infoLog(dir);
  expect(log, `${dir}/LOG`).not.toMatch(/worker thread could not start/);
}

describe('DB against the model on real files, jobs on worker threads', () => {
  it(`the model's commands, every kind (reopen and flush included), one region or three: ${MODEL_RUNS} runs`, async () => {
    const totals = emptyTotals();
    let n = 0;
    await fc.assert(
      fc.asyncProperty(optionsArb, fc.boolean(), fc.array(commandArb, { minLength: 20, maxLength: 120, size: 'max' }), async (options, sharded, commands: Command[]) => {
        const dir = join(root, `model-${n++}`);
        const started = Date.now();
        const run = new WorkerModelRun(dir, { ...options, fs, ...(sharded ? { router: threeRegions } : {}) } as OpenOptions);
        try {
          await run.open();
          for (const cmd of commands) await run.run(cmd);
          await run.checkAll('end');
          await run.close();
          expectWorkers(dir);
        } finally {
          if (run.db !== undefined && !run.db.closed) await run.close();
          rmSync(dir, { recursive: true, force: true });
        }
        totals.runs++;
        totals.commands += commands.length;
        totals.reopens += commands.filter((c) => c.t === 'reopen').length;
        totals.flushes = (totals.flushes ?? 0) + run.flushes;
        totals.compactions += run.compactions;
        totals.deepest = Math.max(totals.deepest, run.deepest);
        totals.ms += Date.now() - started;
      }),
      { numRuns: MODEL_RUNS, endOnFailure },
    );
    show('model on worker threads', totals);
    expect(totals.reopens).toBeGreaterThan(0);
    expect(totals.flushes).toBeGreaterThan(totals.runs);
    expect(totals.compactions).toBeGreaterThan(0);
  }, timeoutFor(MODEL_RUNS));

  it(`compactions all the time (fills, compactRange, held snapshots, reopen with other options), one region or three: ${COMPACTION_RUNS} runs`, async () => {
    const totals = emptyTotals();
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        compactionOptionsArb,
        fc.boolean(),
        fc.array(compactionCommandArb, { minLength: 10, maxLength: 40, size: 'max' }),
        async (options, sharded, commands) => {
          const dir = join(root, `compaction-${n++}`);
          const started = Date.now();
          try {
            // End with a reopen: recovery of what the workers wrote, read back in full.
            const run = await runCompactionModel(dir, { ...options, fs, ...(sharded ? { router: threeRegions } : {}) }, [...commands, { t: 'reopen' }]);
            expectWorkers(dir);
            totals.compactions += run.compactions;
            totals.deepest = Math.max(totals.deepest, run.deepestLevel);
          } finally {
            rmSync(dir, { recursive: true, force: true });
          }
          totals.runs++;
          totals.commands += commands.length + 1;
          totals.reopens += commands.filter((c) => c.t === 'reopen' || c.t === 'reopenWith').length + 1;
          totals.ms += Date.now() - started;
        },
      ),
      { numRuns: COMPACTION_RUNS, endOnFailure },
    );
    show('compaction model on worker threads', totals);
    expect(totals.deepest).toBeGreaterThanOrEqual(2);
    expect(totals.compactions).toBeGreaterThan(totals.runs * 3);
  }, timeoutFor(COMPACTION_RUNS));
});
