/**
 * scripts/torture: the SIGKILL campaign of test/db/crash-kill.test.ts as a standalone tool, for
 * runs far longer than CI affords.
 *
 *   npm run torture -- [--kills 1000] [--minutes N] [--seed S] [--sharded] [--rotate 200] [--dir D]
 *
 * A child (test/support/crash-writer.ts) opens the database — recovering what the last killed
 * child left — and writes `sync: true` batches, printing each acknowledged batch's id; the tool
 * kills it with SIGKILL after a seeded delay (sometimes during its recovery, mostly while it
 * writes: mid-flush, mid-WAL-switch, mid-group-commit), reads its acknowledgements up to the
 * pipe's end, reopens the directory and checks (crash-batches.ts) that every acknowledged batch is
 * there, none is half there, and each run kept a prefix of what it wrote. The next child goes on
 * in the same directory; every `--rotate` kills a fresh directory starts, so that a check (which
 * reads the whole database) stays fast over thousands of kills. `--sharded` spreads each batch
 * over DezhouKV's regions. Stops after `--kills` kills or `--minutes` minutes, whichever comes
 * first, or at the first problem (the directory is then kept and named). Prints a progress line
 * every 25 kills and a summary; the exit status is 1 on any loss, half batch, other problem or
 * failed reopen, else 0.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DB } from '../src/db.js';
import { DezhouRegionRouter } from '../src/shard/dezhou-router.js';
import { auditRecovered } from '../test/support/crash-batches.js';
import { rng } from '../test/support/seed.js';
import { goThenKill, startCrashChild, type CrashChild } from '../test/support/crash-child.js';

/** Children started ahead of their run: a tsx start-up costs far more than a run. */
const PREFETCH = 3;
const PROGRESS_EVERY = 25;

const { values: args } = parseArgs({
  options: {
    kills: { type: 'string', default: '1000' },
    minutes: { type: 'string' },
    seed: { type: 'string' },
    sharded: { type: 'boolean', default: false },
    rotate: { type: 'string', default: '200' },
    dir: { type: 'string' },
  },
});
const KILLS = Number(args.kills);
const DEADLINE = args.minutes === undefined ? Infinity : Date.now() + Number(args.minutes) * 60_000;
const SEED = args.seed !== undefined ? Number(args.seed) | 0 : (Date.now() ^ (process.pid << 16)) | 0;
const ROTATE = Number(args.rotate);
if (!Number.isInteger(KILLS) || KILLS < 1 || !Number.isInteger(ROTATE) || ROTATE < 1 || Number.isNaN(DEADLINE)) {
  throw new Error('usage: torture [--kills N] [--minutes M] [--seed S] [--sharded] [--rotate K] [--dir D]');
}


async function readAll(db: DB): Promise<Map<string, string>> {
  const entries = new Map<string, string>();
  for await (const [k, v] of db.iterator()) entries.set(k.toString(), v.toString());
  return entries;
}


const totals = { kills: 0, acked: 0, killedBeforeAck: 0, lost: 0, halfApplied: 0, other: 0, failedReopens: 0, childFailures: 0, directories: 0 };
const started = Date.now();
const seconds = (): string => ((Date.now() - started) / 1000).toFixed(0);

function progress(): void {
  const rate = totals.kills / ((Date.now() - started) / 1000);
  console.log(
    `kill ${totals.kills}/${KILLS}  acked ${totals.acked}  lost ${totals.lost}  half-applied ${totals.halfApplied}  ` +
      `other ${totals.other}  failed reopens ${totals.failedReopens}  (${rate.toFixed(2)} kills/s, ${seconds()} s)`,
  );
}

function failed(): boolean {
  return totals.lost + totals.halfApplied + totals.other + totals.failedReopens + totals.childFailures > 0;
}

const children = new Set<CrashChild>();
process.on('SIGINT', () => {
  for (const c of children) c.proc.kill('SIGKILL');
  console.log('interrupted');
  summary();
  process.exit(130);
});

/**
 * One directory's campaign: up to `kills` kills; returns false at the first problem (the
 * directory is then kept for inspection).
 */
async function campaign(dir: string, kills: number, next: () => number, seed: number): Promise<boolean> {
  const acked: number[][] = [];
  const ready: CrashChild[] = [];
  const prefetch = (run: number): void => {
    if (run >= kills) return;
    const child = startCrashChild(dir, run, seed + run, args.sharded ?? false);
    children.add(child);
    ready.push(child);
  };
  const stopChildren = (): void => {
    for (const c of ready) c.proc.kill('SIGKILL');
  };
  for (let run = 0; run < PREFETCH; run++) prefetch(run);
  for (let run = 0; run < kills; run++) {
    if (Date.now() >= DEADLINE) break;
    const child = ready.shift()!;
    const { code } = await goThenKill(child, next);
    children.delete(child);
    totals.kills++;
    acked.push([...child.acked]);
    totals.acked += child.acked.length;
    if (child.acked.length === 0) totals.killedBeforeAck++;
    if (code !== null) {
      // Not killed by us: it failed by itself, most likely its own open (recovery) refused.
      totals.childFailures++;
      console.log(`run ${run} in ${dir}: the child exited by itself (code ${code}):\n${child.stderr.join('')}`);
      stopChildren();
      return false;
    }
    prefetch(run + PREFETCH);
    let db: DB;
    try {
      db = await DB.open(dir, { writeBufferSize: 4096, ...(args.sharded ? { router: new DezhouRegionRouter() } : {}) });
    } catch (err) {
      totals.failedReopens++;
      console.log(`run ${run} in ${dir}: reopen failed: ${(err as Error).stack ?? String(err)}`);
      stopChildren();
      return false;
    }
    try {
      const audit = auditRecovered(await readAll(db), acked);
      totals.lost += audit.lost;
      totals.halfApplied += audit.halfApplied;
      totals.other += audit.other;
      if (audit.problems.length > 0) {
        console.log(`run ${run} in ${dir}: ${audit.problems.length} problem(s):\n  ${audit.problems.slice(0, 20).join('\n  ')}`);
        stopChildren();
        return false;
      }
    } finally {
      await db.close();
    }
    if (totals.kills % PROGRESS_EVERY === 0) progress();
  }
  stopChildren();
  return true;
}

function summary(): void {
  const cores = cpus();
  console.log(
    [
      '',
      `torture: ${totals.kills} kills in ${seconds()} s — seed ${SEED}, ${args.sharded ? 'sharded (DezhouKV router)' : 'one region'}, ` +
        `${totals.directories} director${totals.directories === 1 ? 'y' : 'ies'} of up to ${ROTATE} kills`,
      `  node ${process.version}, ${cores.length} × ${cores[0]?.model ?? 'unknown CPU'}`,
      `  kills                  ${totals.kills}`,
      `  acknowledged batches   ${totals.acked}`,
      `  kills before any ack   ${totals.killedBeforeAck}`,
      `  lost                   ${totals.lost}`,
      `  half-applied           ${totals.halfApplied}`,
      `  other problems         ${totals.other}`,
      `  failed reopens         ${totals.failedReopens}`,
      `  children that failed   ${totals.childFailures}`,
      failed() ? 'FAILED' : 'OK: every acknowledged batch survived, none half applied',
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  console.log(`torture: up to ${KILLS} kills${DEADLINE === Infinity ? '' : ` or ${args.minutes} minutes`}, seed ${SEED} (--seed ${SEED} to replay the same choices)`);
  const next = rng(SEED ^ 0x4b111);
  while (totals.kills < KILLS && Date.now() < DEADLINE) {
    const dir = args.dir !== undefined ? mkdtempSync(join(args.dir, 'sievekv-torture-')) : mkdtempSync(join(tmpdir(), 'sievekv-torture-'));
    totals.directories++;
    const ok = await campaign(dir, Math.min(ROTATE, KILLS - totals.kills), next, (SEED + totals.kills * 7919) | 0);
    if (!ok) {
      console.log(`kept ${dir} for inspection`);
      break;
    }
    rmSync(dir, { recursive: true, force: true });
  }
  if (totals.kills % PROGRESS_EVERY !== 0) progress();
  summary();
  process.exitCode = failed() ? 1 : 0;
}

await main();
