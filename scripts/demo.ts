/**
 * `npm run demo`: a tour of sievekv on a real directory. Loads data, reads it back, asks for keys
 * that are not there (the filters answer most of those without reading a block), iterates a
 * range, dumps one table file, and shows the filter library an application can use on its own.
 *
 *   npm run demo [-- DIR]     (default: ./sievekv-demo, recreated on each run)
 */
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { BlockedBloomFilterPolicy, BloomFilter, BloomFilterPolicy, DB, HyperLogLog, RibbonFilterPolicy } from '../src/index.js';
import { main as cli } from '../src/tools/cli.js';

const dir = resolve(process.argv[2] ?? 'sievekv-demo');
const N = 200_000;
const key = (i: number): string => `user:${String(i).padStart(8, '0')}`;
const value = (i: number): string => JSON.stringify({ id: i, name: `user ${i}`, score: (i * 7919) % 1000 });
const ms = (t: number): string => `${(performance.now() - t).toFixed(0)} ms`;
const write = (s: string): void => void process.stdout.write(s);

async function run(): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  write(`sievekv demo in ${dir}\n\n`);
  const db = await DB.open(dir, { filterPolicy: new BloomFilterPolicy(10), compression: 'lz4' });

  let t = performance.now();
  for (let i = 0; i < N; i += 1000) {
    const ops = [];
    for (let j = i; j < i + 1000; j++) ops.push({ type: 'put' as const, key: key(j), value: value(j) });
    await db.batch(ops);
  }
  await db.del(key(42));
  await db.compactRange(); // flush the memtables so the reads below go to table files
  write(`wrote ${N.toLocaleString()} keys in batches of 1,000 (${ms(t)}); files at level 0: ${db.getProperty('sievekv.num-files-at-level0')}\n`);

  await db.close();
  const reopened = await DB.open(dir, { filterPolicy: new BloomFilterPolicy(10) });
  t = performance.now();
  let found = 0;
  for (let i = 0; i < N; i += 7) if (reopened.getSync(key(i))?.toString() === value(i)) found++;
  write(`reopened and read back ${found.toLocaleString()} of ${Math.ceil(N / 7).toLocaleString()} sampled keys correctly (${ms(t)}); deleted key 42: ${String(reopened.getSync(key(42)))}\n`);

  t = performance.now();
  let absent = 0;
  // Absent keys inside the tables' key ranges (user:00000000! sorts between two written keys), so
  // only the filters can tell they are not there.
  for (let i = 0; i < 100_000; i++) if (reopened.getSync(`${key(i * 2)}!`) === undefined) absent++;
  const stats = JSON.parse(reopened.getProperty('sievekv.stats')!) as Record<string, number>;
  write(`asked for ${absent.toLocaleString()} absent keys (${ms(t)})\n`);
  write(
    `  filters: ${stats.filterChecks!.toLocaleString()} checks, ${stats.filterNegatives!.toLocaleString()} said "not here" ` +
      `(${((100 * stats.filterNegatives!) / Math.max(1, stats.filterChecks!)).toFixed(1)}% of block reads saved), ` +
      `${stats.filterFalsePositives!.toLocaleString()} false positives; blocks read: ${stats.blocksRead!.toLocaleString()}, cache hits: ${stats.blockCacheHits!.toLocaleString()}\n`,
  );
  write(`  estimated distinct keys (HyperLogLog sketches in the tables): ${reopened.getProperty('sievekv.estimate-num-keys')}\n`);

  write('\nthe first 3 keys from user:00100000 on:\n');
  for await (const [k, v] of reopened.iterator({ gte: key(100_000), limit: 3 })) write(`  ${k.toString()} = ${v.toString()}\n`);
  await reopened.close();

  const { readdirSync } = await import('node:fs');
  const table = readdirSync(dir).find((f) => f.endsWith('.ldb'));
  if (table !== undefined) {
    write(`\n$ sievekv dump --stats ${table}\n`);
    await cli(['dump', '--stats', resolve(dir, table)], { stdout: process.stdout, stderr: process.stderr });
  }

  write('\nthe filter library on its own:\n');
  const guard = BloomFilter.create({ expectedInsertions: 100_000, fpp: 0.01 });
  for (let i = 0; i < 100_000; i++) guard.add(key(i));
  let fp = 0;
  for (let i = 0; i < 100_000; i++) if (guard.mightContain(`missing:${i}`)) fp++;
  write(`  BloomFilter(100k keys, fpp 1%): ${(guard.bitSize / 8 / 1024).toFixed(0)} KiB, k=${guard.hashCount}, measured false positives ${(fp / 1000).toFixed(2)}%\n`);
  const hll = new HyperLogLog(14);
  for (let i = 0; i < 1_000_000; i++) hll.add(key(i % 250_000));
  write(`  HyperLogLog(p=14) over 1,000,000 adds of 250,000 distinct keys: ${Math.round(hll.count()).toLocaleString()}\n`);
  const keys = Array.from({ length: 10_000 }, (_, i) => Buffer.from(key(i)));
  for (const policy of [new BloomFilterPolicy(10), new BlockedBloomFilterPolicy(15), new RibbonFilterPolicy(10)]) {
    const filter = policy.createFilter(keys);
    let hits = 0;
    for (let i = 0; i < 100_000; i++) if (policy.keyMayMatch(Buffer.from(`missing:${i}`), filter)) hits++;
    write(`  ${policy.name.padEnd(28)} 10,000 keys: ${((filter.length * 8) / 10_000).toFixed(2)} bits/key, false positives ${(hits / 1000).toFixed(3)}%\n`);
  }
}

run().catch((err: unknown) => {
  process.stderr.write(`demo failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
});
