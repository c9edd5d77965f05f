/**
 * SIGKILL at random moments. A child process (test/support/crash-writer.ts) opens the database
 * and writes `sync: true` batches, printing each acknowledged batch id; the parent kills it after
 * a seeded delay — during recovery, between writes, mid-flush, mid-WAL-switch — then reopens the
 * directory in-process and checks (crash-batches.ts `checkRecovered`) that every acknowledged
 * batch is there, no batch is half there, and each run kept a prefix of its batches. The next
 * child continues on the same directory. Children are started a few runs ahead, and each
 * waits for a line on stdin before it opens, so its start-up (tsx) overlaps earlier runs.
 * `npm run torture -- --kills 1000` (scripts/torture.ts) runs the same campaign at length.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { DB } from '../../src/db.js';
import { DezhouRegionRouter } from '../../src/shard/dezhou-router.js';
import { batchOps, checkRecovered, runStart } from '../support/crash-batches.js';
import { rng, testSeed } from '../support/seed.js';
import { goThenKill, startCrashChild, type CrashChild } from '../support/crash-child.js';

const KILLS = 50;
/** Kills of the sharded campaign (its checks are the same; its children open four regions). */
const SHARDED_KILLS = 15;
/** Children started ahead of their run (each loads, then waits for its go). */
const PREFETCH = 3;


async function readAll(db: DB): Promise<Map<string, string>> {
  const entries = new Map<string, string>();
  for await (const [k, v] of db.iterator()) entries.set(k.toString(), v.toString());
  return entries;
}


/**
 * One campaign: `kills` SIGKILLs of writing children on one directory, checking after each. With
 * `sharded`, DezhouKV's router spreads every batch's keys over several regions.
 */
async function killCampaign(kills: number, sharded: boolean): Promise<void> {
    const dir = mkdtempSync(join(tmpdir(), 'sievekv-kill-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const seed = testSeed();
    const next = rng(seed ^ 0x4b111);
    const acked: number[][] = [];
    let totalAcked = 0;
    let killedBeforeOpen = 0;
    // Children start PREFETCH runs ahead: a tsx start-up costs far more than a run.
    const ready: CrashChild[] = [];
    const prefetch = (run: number): void => {
      if (run < kills) ready.push(startCrashChild(dir, run, seed + run, sharded));
    };
    for (let run = 0; run < PREFETCH; run++) prefetch(run);
    onTestFinished(() => {
      for (const c of ready) c.proc.kill('SIGKILL');
    });
    for (let run = 0; run < kills; run++) {
      const child = ready.shift()!;
      const { code, fromOpen } = await goThenKill(child, next);
      // Killed by our signal (exit code null), not failed by itself (exit code 1, reason on stderr).
      expect(code, `run ${run}: the child exited by itself: ${child.stderr.join('')}`).toBe(null);
      acked.push([...child.acked]);
      totalAcked += child.acked.length;
      if (!fromOpen && child.acked.length === 0) killedBeforeOpen++;
      prefetch(run + PREFETCH);
      const db = await DB.open(dir, { writeBufferSize: 4096, ...(sharded ? { router: new DezhouRegionRouter() } : {}) });
      try {
        const problems = checkRecovered(await readAll(db), acked);
        expect(problems.slice(0, 10), `after kill ${run} (SIEVE_SEED=${seed})`).toEqual([]);
      } finally {
        await db.close();
      }
    }
    // The test is only worth something if the kills landed while batches were being written.
    // Those counted from an ack (goThenKill) do, however slowly the children start on a busy
    // machine; the others add what they catch.
    expect(totalAcked).toBeGreaterThan(kills);
    console.log(`crash-kill${sharded ? ' (sharded)' : ''}: ${kills} kills, ${totalAcked} acknowledged batches, ${killedBeforeOpen} kills before any ack`);
}

describe('SIGKILL while writing synced batches', () => {
  it(`keeps every acknowledged batch and never half a batch, over ${KILLS} kills`, async () => {
    await killCampaign(KILLS, false);
  }, 300_000); // 55-90 s on a busy 2-core machine; the margin is for slower disks and starts

  it(`on a database sharded by DezhouKV's router, batches spanning regions are never half there (${SHARDED_KILLS} kills)`, async () => {
    const router = new DezhouRegionRouter();
    // The scheme's batches do span regions (else this would test nothing new).
    const spanning = Array.from({ length: 20 }, (_, i) => new Set(batchOps(runStart(0) + i, 6, 10).map((op) => router.regionOf(Buffer.from(op.key)))).size);
    expect(Math.max(...spanning)).toBeGreaterThan(1);
    await killCampaign(SHARDED_KILLS, true);
  }, 180_000);

  it('the check itself rejects a half batch, a lost acknowledged batch, a gap and a stale overwrite', () => {
    // Three batches of run 0 applied in order, as the writer makes them.
    const apply = (entries: Map<string, string>, id: number, n: number): void => {
      for (const op of batchOps(id, n, 3)) {
        if (op.type === 'put') entries.set(op.key, op.value);
        else entries.delete(op.key);
      }
    };
    const ids = [runStart(0), runStart(0) + 1, runStart(0) + 2];
    const good = new Map<string, string>();
    for (const id of ids) apply(good, id, 3);
    expect(checkRecovered(good, [ids])).toEqual([]);
    const prefix = new Map<string, string>();
    apply(prefix, ids[0]!, 3);
    expect(checkRecovered(prefix, [[ids[0]!]])).toEqual([]);

    const half = new Map(good);
    half.delete(`b${ids[1]}-k2`);
    expect(checkRecovered(half, [ids]).join('\n')).toMatch(/half a batch/);
    expect(checkRecovered(prefix, [ids]).join('\n')).toMatch(/acknowledged batch \d+ is missing/);
    const gap = new Map<string, string>();
    apply(gap, ids[0]!, 3);
    apply(gap, ids[2]!, 3);
    expect(checkRecovered(gap, [[]]).join('\n')).toMatch(/not a prefix/);
    const stale = new Map(good);
    const shared = [...stale.keys()].find((k) => k.startsWith('s'))!;
    stale.set(shared, `s${ids[0]! - 1}`);
    expect(checkRecovered(stale, [ids]).join('\n')).toMatch(new RegExp(`${shared} is`));
  });
});
