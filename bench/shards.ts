/**
 * bench/shards: point reads on one region vs DezhouKV's uneven split vs a balanced split.
 *
 *   npx tsx bench/shards.ts [--n 200000] [--reads 200000]
 *
 * Each layout is loaded with the same N keys (16-byte keys, 100-byte values, random order),
 * compacted, then read: readrandom (present keys) and readmissing (absent keys inside the key
 * range, so only the filters can answer), with the synchronous API. Every layout runs in its own
 * child process so one's heap does not slow another's. Prints a setup header, then a line per
 * layout and workload with ops/s and what a read consulted (files, filter checks per get).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DB } from '../src/db.js';
import { DezhouRegionRouter } from '../src/shard/dezhou-router.js';
import { JumpRouter } from '../src/shard/jump-router.js';
import type { RegionRouter } from '../src/shard/region-router.js';

type Layout = 'one region' | 'DezhouKV split' | 'jump(4) balanced';
const LAYOUTS: Layout[] = ['one region', 'DezhouKV split', 'jump(4) balanced'];

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const N = arg('n', 200_000);
const READS = arg('reads', 200_000);

function routerOf(layout: Layout): RegionRouter | undefined {
  if (layout === 'DezhouKV split') return new DezhouRegionRouter();
  if (layout === 'jump(4) balanced') return new JumpRouter(4);
  return undefined;
}

/** db_bench's key: 16 decimal digits. */
const key = (i: number): Buffer => Buffer.from(String(i).padStart(16, '0'));

/** A deterministic permutation step (LCG over a power of two ≥ n). */
function shuffled(n: number): number[] {
  const out = Array.from({ length: n }, (_, i) => i);
  let s = 0x9e3779b9;
  for (let i = n - 1; i > 0; i--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

async function runLayout(layout: Layout): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sievekv-bench-shards-'));
  try {
    const router = routerOf(layout);
    const db = await DB.open(dir, router === undefined ? {} : { router });
    const value = Buffer.alloc(100, 0x61);
    for (const i of shuffled(N)) db.putSync(key(i), value);
    await db.compactRange();
    const order = shuffled(N);
    const stats = (): Record<string, number> => JSON.parse(db.getProperty('sievekv.stats')!) as Record<string, number>;
    for (const workload of ['readrandom', 'readmissing'] as const) {
      // Absent keys sort between two present ones ("0000000000001234" < "0000000000001234x").
      const keys = Array.from({ length: READS }, (_, r) => (workload === 'readrandom' ? key(order[r % N]!) : Buffer.concat([key(order[r % N]!), Buffer.from('x')])));
      for (let r = 0; r < Math.min(20_000, READS); r++) db.getSync(keys[r]!); // warm up
      const before = stats();
      let found = 0;
      const t = process.hrtime.bigint();
      for (let r = 0; r < READS; r++) if (db.getSync(keys[r]!) !== undefined) found++;
      const ns = Number(process.hrtime.bigint() - t);
      const after = stats();
      const per = (f: string): string => ((after[f]! - before[f]!) / READS).toFixed(2);
      process.stdout.write(
        `${layout.padEnd(18)} ${workload.padEnd(12)} ${Math.round((READS * 1e9) / ns).toLocaleString('en-US').padStart(10)} ops/s ` +
          `${(ns / READS / 1000).toFixed(2).padStart(6)} µs/op  found ${found.toLocaleString('en-US').padStart(8)}  ` +
          `files/get ${per('filesConsulted')}  filter checks/get ${per('filterChecks')}  negatives/get ${per('filterNegatives')}\n`,
      );
    }
    if (router !== undefined) {
      const regions = JSON.parse(db.getProperty('sievekv.regions')!) as { region: number; estimatedKeys: number; bytes: number }[];
      process.stdout.write(`${''.padEnd(18)} keys per region: ${regions.map((r) => `${r.region}: ${r.estimatedKeys.toLocaleString('en-US')}`).join(', ')}\n`);
    }
    await db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function header(): void {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    // not a git checkout
  }
  process.stdout.write(
    `sievekv bench/shards — ${new Date().toISOString().slice(0, 10)}, commit ${commit}\n` +
      `Node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'} × ${cpus().length}\n` +
      `N = ${N.toLocaleString('en-US')} keys (16-byte keys, 100-byte values, random order), ${READS.toLocaleString('en-US')} reads per workload, getSync\n` +
      `options: defaults (lz4, Bloom 10 bits/key per block, 4 MiB write buffer), then compactRange; one child process per layout\n\n`,
  );
}

const child = process.argv.indexOf('--layout');
if (child >= 0) {
  await runLayout(process.argv[child + 1] as Layout);
} else {
  header();
  for (const layout of LAYOUTS) {
    const r = spawnSync(process.execPath, [...process.execArgv, process.argv[1]!, '--layout', layout, '--n', String(N), '--reads', String(READS)], {
      stdio: 'inherit',
    });
    if (r.status !== 0) process.exitCode = 1;
  }
}
