/**
 * The child of the SIGKILL test (test/db/crash-kill.test.ts). Run as
 *   node --import tsx test/support/crash-writer.ts <dir> <run> <seed> [dezhou]
 * it loads, then waits for a line on stdin (so the parent can start it while it still checks the
 * previous run), opens the database in <dir> (recovering what the last killed child left), prints
 * `open`, and writes `sync: true` batches of crash-batches.ts's scheme with ids from
 * runStart(<run>) on, forever: sometimes one at a time, sometimes several issued together (group
 * commit). It prints `ack <id>` once a batch's promise has resolved (stdout to a pipe is
 * synchronous on Linux: a printed ack is in the pipe before the next write starts). The parent
 * kills it with SIGKILL. With `dezhou`, the database is sharded by DezhouKV's router, so a batch's
 * keys land in several regions (one WAL record all the same).
 */
import { DB } from '../../src/db.js';
import { DezhouRegionRouter } from '../../src/shard/dezhou-router.js';
import { batchOps, runStart } from './crash-batches.js';
import { rng } from './seed.js';

const [dir, runArg, seedArg, routerArg] = process.argv.slice(2);
if (dir === undefined || runArg === undefined || seedArg === undefined) throw new Error('usage: crash-writer <dir> <run> <seed>');
const next = rng(Number(seedArg));

/** Small memtables: flushes and WAL switches happen while the child is being killed. */
const CRASH_WRITE_BUFFER_SIZE = 4096;

async function main(): Promise<void> {
  await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
  process.stdin.pause();
  const router = routerArg === 'dezhou' ? { router: new DezhouRegionRouter() } : {};
  const db = await DB.open(dir!, { writeBufferSize: CRASH_WRITE_BUFFER_SIZE, compression: 'snappy', ...router });
  process.stdout.write('open\n');
  let id = runStart(Number(runArg));
  const write = (): Promise<void> => {
    const myId = id++;
    const ops = batchOps(myId, 1 + Math.floor(next() * 8), Math.floor(next() * 200));
    return db.batch(ops, { sync: true }).then(() => {
      process.stdout.write(`ack ${myId}\n`);
    });
  };
  for (;;) {
    if (next() < 0.5) {
      await write();
    } else {
      const group: Promise<void>[] = [];
      const k = 2 + Math.floor(next() * 5);
      for (let i = 0; i < k; i++) group.push(write());
      await Promise.all(group);
    }
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`crash-writer failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
