/**
 * The child of the SIGKILL-during-compaction test (test/db/crash-kill-compaction.test.ts). Run as
 *   node --import tsx test/support/crash-compaction-writer.ts <dir> <run> <seed>
 * it loads, waits for a line on stdin, opens the database in <dir> with tiny memtables, files and
 * level targets (so flushes and compactions on the worker threads run all the time), prints
 * `open`, and writes batches of crash-batches.ts's scheme from runStart(<run>) on, forever — most
 * unsynced (a SIGKILL keeps what reached the kernel, so these must survive too), some synced,
 * some issued together. It prints `ack <id>` once a batch's promise has resolved, and `merged <n>`
 * whenever the count of finished merges (sievekv.stats) has grown, so that the parent can aim its
 * kill at a time when merges run. The parent kills it with SIGKILL.
 */
import { DB } from '../../src/db.js';
import { batchOps, runStart } from './crash-batches.js';
import { rng } from './seed.js';

const [dir, runArg, seedArg] = process.argv.slice(2);
if (dir === undefined || runArg === undefined || seedArg === undefined) throw new Error('usage: crash-compaction-writer <dir> <run> <seed>');
const next = rng(Number(seedArg));

/** Tiny sizes: a flush every few batches, level 0 compacted at 2 files, levels ×2 from 16 KiB. */
const OPTIONS = {
  writeBufferSize: 4096,
  maxFileSize: 4096,
  maxBytesForLevelBase: 16 * 1024,
  levelMultiplier: 2,
  l0CompactionTrigger: 2,
  l0SlowdownTrigger: 4,
  l0StopTrigger: 8,
  compression: 'snappy',
} as const;

async function main(): Promise<void> {
  await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
  process.stdin.pause();
  const db = await DB.open(dir!, OPTIONS);
  process.stdout.write('open\n');
  let id = runStart(Number(runArg));
  const write = (): Promise<void> => {
    const myId = id++;
    const ops = batchOps(myId, 1 + Math.floor(next() * 8), Math.floor(next() * 300));
    return db.batch(ops, { sync: next() < 0.2 }).then(() => {
      process.stdout.write(`ack ${myId}\n`);
    });
  };
  let merged = 0;
  const reportMerges = (): void => {
    const stats = JSON.parse(db.getProperty('sievekv.stats')!) as { levels: { compactions: number }[] };
    const now = stats.levels.reduce((s, l) => s + l.compactions, 0);
    if (now > merged) process.stdout.write(`merged ${(merged = now)}\n`);
  };
  for (let round = 0; ; round++) {
    if (round % 4 === 0) reportMerges();
    if (next() < 0.6) {
      await write();
    } else {
      const group: Promise<void>[] = [];
      const k = 2 + Math.floor(next() * 5);
      for (let i = 0; i < k; i++) group.push(write());
      await Promise.all(group);
    }
    // A turn of the event loop now and then, so job results are installed between writes too
    // (an unsynced write otherwise yields only when it must wait for a flush).
    if (next() < 0.1) await new Promise((resolve) => setImmediate(resolve));
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`crash-compaction-writer failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
