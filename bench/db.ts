/**
 * bench/db: LevelDB's db_bench workloads (fillseq, fillbatch, fillrandombatch, fillsync,
 * fillrandom, readmissingearly (readmissing before compaction settles), overwrite, overwritebatch,
 * readrandom, readmissing, readseq, readreverse,
 * seekrandom, deleterandom) on sievekv and on the
 * engines a Node.js program would otherwise pick — LevelDB (classic-level), RocksDB (rocksdb),
 * LMDB (lmdb) and SQLite (better-sqlite3) — in one run on one machine, with the ratios.
 *
 * The peers other than classic-level are not dependencies of sievekv. Install them first, then
 * run the compiled benchmark:
 *
 *   npm --prefix bench/peers install        # rocksdb, lmdb, better-sqlite3 (prebuilt binaries)
 *   npm run build && node dist/bench/db.js [--quick] [--n=1000000] [--reads=N]
 *       [--engines=sievekv,leveldb,rocksdb,lmdb,sqlite] [--workloads=fillrandom,readrandom,...]
 *       [--profile=DIR] [--markdown] [--json=PATH]
 *   node dist/bench/db.js --from=PATH [--markdown]  # the report of an earlier run's results file
 *   node dist/bench/chart.js PATH docs/bench.svg   # the chart, from the results file
 *
 * Run it compiled, not through tsx: from TypeScript sources sievekv's background worker thread
 * loads its modules through tsx's transpiler, which makes its flushes several times slower (the
 * report then says so). A peer that is not installed is skipped with a note. `--quick`:
 * N = 100,000. `--reads`: the operations of readrandom, readmissing(early), seekrandom and deleterandom
 * (default N/4). `--profile`: every child runs under `node --cpu-prof` and leaves its profile in
 * DIR. `--workloads` adds fillrandom when a chosen workload needs its database. `--json`: the
 * results (bench/db/results.ts) also go to PATH, for bench/chart.ts; `--from` prints their report
 * again (plain or `--markdown`) without running anything. A full run at N = 1,000,000
 * takes about 18 minutes on two cores; `--quick` about two minutes.
 *
 * Method: every (column, workload) runs in a fresh node process of its own, so no engine runs in
 * a heap or with JIT feedback another one shaped; workloads go in db_bench's order, and within a
 * workload every column in turn (so a change in machine load touches one workload's line, not
 * one engine's column). A fill opens a new database in a temporary directory; fillrandom's is
 * kept, overwrite writes over it, and the reads and deleterandom reopen it in their processes
 * (untimed: an engine's recovery happens at open). Before a read workload, an LSM waits
 * (untimed, at most a minute) until its compactions have brought level 0 below 4 files, the
 * compaction trigger of all three — but for readmissingearly, which reads a copy of the database
 * fillrandom left as soon as it opens, as issue 11 asks of misses; the shapes the reads met are
 * printed. A column that reads another column's database (LevelDB sync, sievekv mmap) reads a
 * copy taken before that column's process ran, so both meet the same shape. Only the loop of
 * operations is timed; every await is a separate operation (no concurrency).
 *
 * Around the loop each child also measures its process: its peak RSS (all threads, start to
 * exit), the time of close() after the workload, after overwrite the time to reopen the closed
 * directory, and for sievekv the writers' stalls over the loop (`sievekv.stats`). The parent
 * sums the files left in the directory after each write workload. The report (bench/db/report.ts)
 * ends with issue 10's targets, each figure beside its target.
 * Workload data and semantics: bench/db/workloads.ts. Results and the command: BENCHMARKS.md.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { leveldbEngine } from './db/engine-leveldb.js';
import { lmdbEngine } from './db/engine-lmdb.js';
import { rocksdbEngine } from './db/engine-rocksdb.js';
import { sievekvEngine } from './db/engine-sievekv.js';
import { sqliteEngine } from './db/engine-sqlite.js';
import { PEERS_DIR, peerInstalled, REPO_DIR } from './db/peers.js';
import { formatReport } from './db/report.js';
import { readResults, RESULTS_FORMAT, type BenchResults, type CellResult, type ChildMeasures } from './db/results.js';
import type { Column, Engine, StallFigures, Store } from './db/store.js';
import { BATCH_ENTRIES, KEY_BYTES, keyNumbers, makeValues, runAsync, runSync, seedIndex, VALUE_BYTES, WORKLOADS, type Outcome, type Sizes, type Workload } from './db/workloads.js';

const ENGINES: readonly Engine[] = [sievekvEngine, leveldbEngine, rocksdbEngine, lmdbEngine, sqliteEngine];
const VALUE_SEED = 301; // db_bench's RandomGenerator seed, for the value pool
const KEY_SEED = 1000; // plus the workload's seed index: each workload its own sequence, the same for every engine
const CHILD_FLAG = '--child';
/** Level-0 files at which all three LSMs start a compaction: reads wait until there are fewer. */
const L0_COMPACTION_TRIGGER = 4;
/** The longest a read waits after open for compactions to bring level 0 below the trigger. */
const SETTLE_LIMIT_MS = 60_000;
const RESULT_PREFIX = 'BENCH-DB-RESULT ';
/** The workload after which the closed database is reopened (timed): fillrandom + overwrite's. */
const REOPEN_AFTER = 'overwrite';

interface ChildTask {
  engine: string;
  column: string;
  workload: string;
  dir: string;
  sizes: Sizes;
  /** After closing, open the directory again (timed) and close it (untimed). */
  reopen: boolean;
}

interface ChildResult {
  measures?: ChildMeasures;
  skipped?: string;
}

// ---------------------------------------------------------------------------------------------
// Child: one workload of one column.

async function runChild(task: ChildTask, startRssBytes: number): Promise<ChildResult> {
  const engine = ENGINES.find((e) => e.name === task.engine)!;
  const column = engine.columns.find((c) => c.label === task.column)!;
  const w = WORKLOADS.find((x) => x.name === task.workload)!;
  const keys = keyNumbers(w, task.sizes, KEY_SEED + seedIndex(w));
  const values = makeValues(VALUE_SEED);
  const store = await engine.open(task.dir, column, w.synced);
  let outcome: Outcome | undefined;
  let stalls: StallFigures | undefined;
  try {
    if (w.kind === 'read' && w.settle !== false) await settle(store);
    const shape = w.db === 'filled' ? store.shape?.() : undefined;
    const before = w.kind === 'write' ? store.stalls?.() : undefined;
    outcome = store.style === 'async' ? await runAsync(w, store, keys, values) : runSync(w, store, keys, values);
    if (before !== undefined) stalls = stallsSince(before, store.stalls!());
    if (outcome !== undefined && shape !== undefined) outcome = { ...outcome, shape };
  } catch (err) {
    await store.close();
    throw err;
  }
  const closing = performance.now();
  await store.close();
  const closeMs = performance.now() - closing;
  if (outcome === undefined) return { skipped: 'no synchronous call for it' };
  // A failed reopen costs only its own figure: the workload's are already measured.
  let reopen: { reopenMs: number } | { reopenError: string } | undefined;
  if (task.reopen) {
    try {
      const opening = performance.now();
      const again = await engine.open(task.dir, column, false);
      reopen = { reopenMs: performance.now() - opening };
      await again.close();
    } catch (err) {
      reopen = { reopenError: String(err) };
    }
  }
  const maxRssBytes = process.resourceUsage().maxRSS * 1024; // Node reports kilobytes
  return { measures: { ...outcome, startRssBytes, maxRssBytes, closeMs, ...reopen, ...(stalls === undefined ? {} : { stalls }) } };
}

/** The stalls between two readings of the cumulative figures. */
function stallsSince(before: StallFigures, after: StallFigures): StallFigures {
  const since = (r: keyof StallFigures): StallFigures[typeof r] => ({ micros: after[r].micros - before[r].micros, count: after[r].count - before[r].count });
  return { memtableFull: since('memtableFull'), l0Slowdown: since('l0Slowdown'), l0Stop: since('l0Stop') };
}

/**
 * Untimed, before a read workload: lets an LSM's background compactions bring level 0 below the
 * compaction trigger (at most SETTLE_LIMIT_MS), so reads meet a settled shape rather than one
 * that depends on how far compaction got before the writer's process closed the database (db_bench
 * runs readrandom twice for the same reason). Engines without levels return at once.
 */
async function settle(store: Store): Promise<void> {
  if (store.level0Files === undefined) return;
  const deadline = Date.now() + SETTLE_LIMIT_MS;
  while (store.level0Files() >= L0_COMPACTION_TRIGGER && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// ---------------------------------------------------------------------------------------------
// Parent: plan, run the children, report.

interface Options {
  sizes: Sizes;
  engines: readonly Engine[];
  workloads: readonly Workload[];
  profileDir: string | null;
  markdown: boolean;
  jsonPath: string | null;
  /** Print the report of this results file instead of running. */
  fromPath: string | null;
}

function parseArgs(argv: readonly string[]): Options {
  const flags = new Map<string, string>();
  for (const a of argv) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    if (m === null) throw new Error(`unknown argument ${a}`);
    flags.set(m[1]!, m[2] ?? 'true');
  }
  const known = new Set(['quick', 'n', 'reads', 'engines', 'workloads', 'profile', 'markdown', 'json', 'from']);
  for (const k of flags.keys()) if (!known.has(k)) throw new Error(`unknown flag --${k}`);
  const n = Number(flags.get('n') ?? (flags.has('quick') ? 100_000 : 1_000_000));
  const reads = Number(flags.get('reads') ?? Math.floor(n / 4));
  if (!Number.isInteger(n) || n < 1000 || !Number.isInteger(reads) || reads < 1) throw new Error('--n must be an integer ≥ 1000, --reads ≥ 1');
  const path = (flag: string): string | null => {
    const value = flags.get(flag) ?? null;
    if (value === 'true' || value === '') throw new Error(`--${flag} needs a path: --${flag}=results.json`);
    return value;
  };
  const pick = <T extends { name: string }>(all: readonly T[], flag: string): readonly T[] => {
    const list = flags.get(flag);
    if (list === undefined) return all;
    const names = list.split(',');
    for (const name of names) if (!all.some((x) => x.name === name)) throw new Error(`--${flag}: unknown ${name}`);
    return all.filter((x) => names.includes(x.name));
  };
  let workloads = pick(WORKLOADS, 'workloads');
  // Reads and overwrite/deleterandom need the database fillrandom makes.
  if (workloads.some((w) => w.db === 'filled')) workloads = WORKLOADS.filter((w) => workloads.includes(w) || w.db === 'fill');
  return { sizes: { n, reads }, engines: pick(ENGINES, 'engines'), workloads, profileDir: flags.get('profile') ?? null, markdown: flags.has('markdown'), jsonPath: path('json'), fromPath: path('from') };
}

function runs(column: Column, w: Workload): boolean {
  if (column.coverage === 'all') return true;
  if (column.coverage === 'writes') return w.kind === 'write';
  if (column.coverage === 'reads') return w.kind === 'read';
  return w.name === 'readrandom' || w.name === 'readmissing' || w.name === 'readmissingearly';
}

function spawnChild(task: ChildTask, profileDir: string | null): ChildResult {
  const self = fileURLToPath(import.meta.url);
  const profile =
    profileDir === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${task.column.replace(/\W+/g, '-')}.${task.workload}.cpuprofile`];
  const r = spawnSync(process.execPath, [...process.execArgv, ...profile, self, CHILD_FLAG, JSON.stringify(task)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 16 * 1024 * 1024,
  });
  const line = r.stdout.split('\n').find((l) => l.startsWith(RESULT_PREFIX));
  if (r.status !== 0 || line === undefined) return { skipped: `failed (exit ${r.status ?? r.signal})` };
  return JSON.parse(line.slice(RESULT_PREFIX.length)) as ChildResult;
}

/** Total bytes of the files under `dir` (an engine's whole database, its logs and lock included). */
function directoryBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += directoryBytes(path);
    else if (entry.isFile()) total += statSync(path).size;
  }
  return total;
}

function commitDescription(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_DIR, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'bench/db', 'bench/db.ts'], { cwd: REPO_DIR, encoding: 'utf8' }).trim();
    return dirty === '' ? head : `${head} + uncommitted changes in src/ or bench/db`;
  } catch {
    return 'unknown';
  }
}

const fmtInt = (x: number): string => x.toLocaleString('en-US');
const fmtMB = (bytes: number): string => (bytes / 1e6).toFixed(1);

function main(): void {
  const flag = process.argv.indexOf(CHILD_FLAG);
  if (flag >= 0) {
    const startRssBytes = process.memoryUsage().rss;
    const task = JSON.parse(process.argv[flag + 1]!) as ChildTask;
    runChild(task, startRssBytes).then(
      (result) => process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`),
      (err: unknown) => {
        console.error(err);
        process.exitCode = 1;
      },
    );
    return;
  }

  const opts = parseArgs(process.argv.slice(2));
  if (opts.fromPath !== null) {
    console.log(formatReport(readResults(opts.fromPath), opts.markdown));
    return;
  }
  const { sizes } = opts;
  const notes: string[] = [];
  const engines = opts.engines.filter((e) => {
    if (e.peer === undefined || peerInstalled(e.peer)) return true;
    notes.push(`${e.peer} is not installed in ${PEERS_DIR} (npm --prefix bench/peers install): ${e.name} skipped`);
    console.error(`note: ${notes[notes.length - 1]}`);
    return false;
  });
  if (opts.profileDir !== null) mkdirSync(opts.profileDir, { recursive: true });
  const columns = engines.flatMap((engine) => engine.columns.map((column) => ({ engine, column })));
  const root = mkdtempSync(join(os.tmpdir(), 'sievekv-bench-db-'));
  const cpus = os.cpus();
  const started = performance.now();
  const loadAtStart = os.loadavg()[0]!;
  const commit = commitDescription(); // at the start: other work may move HEAD during a long run

  const cells: CellResult[] = [];
  const problems: string[] = [];
  try {
    for (const w of opts.workloads) {
      const dirOf = (column: Column): string => (w.db === 'fresh' ? join(root, `${w.name}-${column.label.replace(/\W+/g, '-')}`) : join(root, (column.readsFrom ?? column.label).replace(/\W+/g, '-')));
      const copyOf = (column: Column): string => join(root, `copy-${w.name}-${column.label.replace(/\W+/g, '-')}`);
      // Reads on copies: a column that reads another's database reads it as that column's process
      // found it (before the merges that process ran), and a read that does not wait for
      // compaction leaves the database where the following workloads start.
      const copies = new Map<string, string>();
      for (const { column } of columns) {
        if (!runs(column, w) || w.kind !== 'read' || (column.readsFrom === undefined && w.settle !== false)) continue;
        if (!existsSync(dirOf(column))) continue; // its filling column failed: the child reports it
        cpSync(dirOf(column), copyOf(column), { recursive: true });
        copies.set(column.label, copyOf(column));
      }
      for (const { engine, column } of columns) {
        if (!runs(column, w)) continue;
        const own = join(root, column.label.replace(/\W+/g, '-'));
        const dir = dirOf(column);
        if (w.db === 'fill') rmSync(own, { recursive: true, force: true });
        const copy = copies.get(column.label);
        const task = { engine: engine.name, column: column.label, workload: w.name, dir: copy ?? dir, sizes, reopen: w.name === REOPEN_AFTER };
        const result = spawnChild(task, opts.profileDir);
        const diskBytes = result.measures !== undefined && w.kind === 'write' ? directoryBytes(dir) : undefined;
        if (w.db === 'fresh') rmSync(dir, { recursive: true, force: true });
        if (copy !== undefined) rmSync(copy, { recursive: true, force: true });
        if (result.measures === undefined) {
          problems.push(`${w.name} ${column.label}: ${result.skipped ?? 'no result'}`);
          continue;
        }
        const o = result.measures;
        cells.push({ workload: w.name, column: column.label, ...o, ...(diskBytes === undefined ? {} : { diskBytes }) });
        const expected = w.kind === 'write' ? (w.name === 'deleterandom' ? undefined : o.checked) : w.expectedFound?.(sizes);
        if (expected !== undefined && o.found !== expected) {
          problems.push(`${w.name} ${column.label}: found ${fmtInt(o.found)}, expected ${fmtInt(expected)}`);
        }
        if (w.name === 'readrandom' && o.bytes !== o.found * VALUE_BYTES) problems.push(`readrandom ${column.label}: values of the wrong size`);
        if (o.reopenError !== undefined) problems.push(`${w.name} ${column.label}: the reopen failed: ${o.reopenError}`);
        const us = (o.seconds * 1e6) / o.ops;
        const disk = diskBytes === undefined ? '' : `, disk ${fmtMB(diskBytes)} MB`;
        const reopen = o.reopenMs === undefined ? '' : `, reopen ${o.reopenMs.toFixed(1)} ms`;
        console.error(
          `  ${w.name.padEnd(15)} ${column.label.padEnd(14)} ${us.toFixed(us >= 10 ? 1 : 2).padStart(8)} µs/op  (${fmtInt(o.found)} found; peak RSS ${fmtMB(o.maxRssBytes)} MB, close ${o.closeMs.toFixed(1)} ms${reopen}${disk})`,
        );
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }

  const results: BenchResults = {
    format: RESULTS_FORMAT,
    run: {
      date: new Date().toISOString(),
      node: process.version,
      v8: process.versions.v8,
      platform: os.platform(),
      arch: os.arch(),
      cpus: cpus.length,
      cpuModel: cpus[0]?.model ?? 'unknown',
      loadAtStart,
      loadAtEnd: os.loadavg()[0]!,
      commit,
      compiled: !import.meta.url.endsWith('.ts'),
      totalSeconds: (performance.now() - started) / 1000,
    },
    sizes: { n: sizes.n, reads: sizes.reads, batchEntries: BATCH_ENTRIES, keyBytes: KEY_BYTES, valueBytes: VALUE_BYTES },
    method: { settleBelowL0Files: L0_COMPACTION_TRIGGER, settleLimitSeconds: SETTLE_LIMIT_MS / 1000 },
    engines: engines.map((e) => ({ name: e.name, version: e.version(), options: e.options, memory: e.memory })),
    columns: columns.map(({ engine, column }) => ({
      label: column.label,
      engine: engine.name,
      style: column.style,
      calls: column.calls,
      ...(column.readsFrom === undefined ? {} : { readsFrom: column.readsFrom }),
    })),
    workloads: opts.workloads.map((w) => ({ name: w.name, kind: w.kind, description: w.description })),
    cells,
    problems,
    notes,
  };
  console.log(formatReport(results, opts.markdown));
  if (opts.jsonPath !== null) {
    writeFileSync(opts.jsonPath, `${JSON.stringify(results, null, 1)}\n`);
    console.error(`results written to ${opts.jsonPath}`);
  }
  if (problems.length > 0) process.exitCode = 1;
}

main();
