/**
 * bench/db: LevelDB's db_bench workloads (fillseq, fillbatch, fillrandombatch, fillsync,
 * fillrandom, overwrite, overwritebatch, readrandom, readmissing, readseq, readreverse,
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
 *       [--profile=DIR] [--markdown]
 *
 * Run it compiled, not through tsx: from TypeScript sources sievekv's background worker thread
 * loads its modules through tsx's transpiler, which makes its flushes several times slower (the
 * report then says so). A peer that is not installed is skipped with a note. `--quick`:
 * N = 100,000. `--reads`: the operations of readrandom, readmissing, seekrandom and deleterandom
 * (default N/4). `--profile`: every child runs under `node --cpu-prof` and leaves its profile in
 * DIR. `--workloads` adds fillrandom when a chosen workload needs its database. A full run at
 * N = 1,000,000 takes about a quarter of an hour on two cores; `--quick` about two minutes.
 *
 * Method: every (column, workload) runs in a fresh node process of its own, so no engine runs in
 * a heap or with JIT feedback another one shaped; workloads go in db_bench's order, and within a
 * workload every column in turn (so a change in machine load touches one workload's line, not
 * one engine's column). A fill opens a new database in a temporary directory; fillrandom's is
 * kept, overwrite writes over it, and the reads and deleterandom reopen it in their processes
 * (untimed: an engine's recovery happens at open). Before a read workload, an LSM waits
 * (untimed, at most a minute) until its compactions have brought level 0 below 4 files, the
 * compaction trigger of all three; the shapes the reads met are printed. Only the loop of
 * operations is timed; every await is a separate operation (no concurrency).
 * Workload data and semantics: bench/db/workloads.ts. Results and the command: BENCHMARKS.md.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { leveldbEngine } from './db/engine-leveldb.js';
import { lmdbEngine } from './db/engine-lmdb.js';
import { rocksdbEngine } from './db/engine-rocksdb.js';
import { sievekvEngine } from './db/engine-sievekv.js';
import { sqliteEngine } from './db/engine-sqlite.js';
import { PEERS_DIR, peerInstalled, REPO_DIR } from './db/peers.js';
import type { Column, Engine, Store } from './db/store.js';
import { BATCH_ENTRIES, KEY_BYTES, keyNumbers, makeValues, runAsync, runSync, VALUE_BYTES, WORKLOADS, type Outcome, type Sizes, type Workload } from './db/workloads.js';

const ENGINES: readonly Engine[] = [sievekvEngine, leveldbEngine, rocksdbEngine, lmdbEngine, sqliteEngine];
const VALUE_SEED = 301; // db_bench's RandomGenerator seed, for the value pool
const KEY_SEED = 1000; // plus the workload's index: each workload its own sequence, the same for every engine
const CHILD_FLAG = '--child';
/** Level-0 files at which all three LSMs start a compaction: reads wait until there are fewer. */
const L0_COMPACTION_TRIGGER = 4;
/** The longest a read waits after open for compactions to bring level 0 below the trigger. */
const SETTLE_LIMIT_MS = 60_000;
const RESULT_PREFIX = 'BENCH-DB-RESULT ';

interface ChildTask {
  engine: string;
  column: string;
  workload: string;
  dir: string;
  sizes: Sizes;
}

interface ChildResult {
  outcome?: Outcome;
  skipped?: string;
}

// ---------------------------------------------------------------------------------------------
// Child: one workload of one column.

async function runChild(task: ChildTask): Promise<ChildResult> {
  const engine = ENGINES.find((e) => e.name === task.engine)!;
  const column = engine.columns.find((c) => c.label === task.column)!;
  const index = WORKLOADS.findIndex((w) => w.name === task.workload);
  const w = WORKLOADS[index]!;
  const keys = keyNumbers(w, task.sizes, KEY_SEED + index);
  const values = makeValues(VALUE_SEED);
  const store = await engine.open(task.dir, column.style, w.synced);
  try {
    if (w.kind === 'read') await settle(store);
    const shape = w.db === 'filled' ? store.shape?.() : undefined;
    const outcome = store.style === 'async' ? await runAsync(w, store, keys, values) : runSync(w, store, keys, values);
    return outcome === undefined ? { skipped: 'no synchronous call for it' } : { outcome: shape === undefined ? outcome : { ...outcome, shape } };
  } finally {
    await store.close();
  }
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
}

function parseArgs(argv: readonly string[]): Options {
  const flags = new Map<string, string>();
  for (const a of argv) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    if (m === null) throw new Error(`unknown argument ${a}`);
    flags.set(m[1]!, m[2] ?? 'true');
  }
  const known = new Set(['quick', 'n', 'reads', 'engines', 'workloads', 'profile', 'markdown']);
  for (const k of flags.keys()) if (!known.has(k)) throw new Error(`unknown flag --${k}`);
  const n = Number(flags.get('n') ?? (flags.has('quick') ? 100_000 : 1_000_000));
  const reads = Number(flags.get('reads') ?? Math.floor(n / 4));
  if (!Number.isInteger(n) || n < 1000 || !Number.isInteger(reads) || reads < 1) throw new Error('--n must be an integer ≥ 1000, --reads ≥ 1');
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
  return { sizes: { n, reads }, engines: pick(ENGINES, 'engines'), workloads, profileDir: flags.get('profile') ?? null, markdown: flags.has('markdown') };
}

function runs(column: Column, w: Workload): boolean {
  if (column.coverage === 'all') return true;
  if (column.coverage === 'writes') return w.kind === 'write';
  return w.name === 'readrandom' || w.name === 'readmissing';
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

function fmtMicros(seconds: number, ops: number): string {
  const us = (seconds * 1e6) / ops;
  return us >= 100 ? us.toFixed(0) : us >= 10 ? us.toFixed(1) : us.toFixed(2);
}

function fmtRate(seconds: number, ops: number): string {
  const r = ops / seconds;
  if (r >= 1e6) return `${(r / 1e6).toFixed(2)} M`;
  if (r >= 1e3) return `${(r / 1e3).toFixed(r >= 1e5 ? 0 : 1)} k`;
  return r.toFixed(0);
}

interface Cell {
  column: Column;
  engine: Engine;
  outcome: Outcome;
}

function rate(c: Cell): number {
  return c.outcome.ops / c.outcome.seconds;
}

function best(cells: readonly Cell[]): Cell | undefined {
  let top: Cell | undefined;
  for (const c of cells) if (top === undefined || rate(c) > rate(top)) top = c;
  return top;
}

function main(): void {
  const flag = process.argv.indexOf(CHILD_FLAG);
  if (flag >= 0) {
    const task = JSON.parse(process.argv[flag + 1]!) as ChildTask;
    runChild(task).then(
      (result) => process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`),
      (err: unknown) => {
        console.error(err);
        process.exitCode = 1;
      },
    );
    return;
  }

  const opts = parseArgs(process.argv.slice(2));
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

  const results = new Map<string, Map<string, Cell>>(); // workload → column label → cell
  const problems: string[] = [];
  try {
    for (const w of opts.workloads) {
      const line = new Map<string, Cell>();
      results.set(w.name, line);
      for (const { engine, column } of columns) {
        if (!runs(column, w)) continue;
        const own = join(root, column.label.replace(/\W+/g, '-'));
        const dir = w.db === 'fresh' ? join(root, `${w.name}-${column.label.replace(/\W+/g, '-')}`) : join(root, (column.readsFrom ?? column.label).replace(/\W+/g, '-'));
        if (w.db === 'fill') rmSync(own, { recursive: true, force: true });
        const result = spawnChild({ engine: engine.name, column: column.label, workload: w.name, dir, sizes }, opts.profileDir);
        if (w.db === 'fresh') rmSync(dir, { recursive: true, force: true });
        if (result.outcome === undefined) {
          problems.push(`${w.name} ${column.label}: ${result.skipped ?? 'no result'}`);
          continue;
        }
        const o = result.outcome;
        line.set(column.label, { column, engine, outcome: o });
        const expected = w.kind === 'write' ? (w.name === 'deleterandom' ? undefined : o.checked) : w.expectedFound?.(sizes);
        if (expected !== undefined && o.found !== expected) {
          problems.push(`${w.name} ${column.label}: found ${fmtInt(o.found)}, expected ${fmtInt(expected)}`);
        }
        if (w.name === 'readrandom' && o.bytes !== o.found * VALUE_BYTES) problems.push(`readrandom ${column.label}: values of the wrong size`);
        console.error(`  ${w.name.padEnd(12)} ${column.label.padEnd(14)} ${fmtMicros(o.seconds, o.ops).padStart(8)} µs/op  (${fmtInt(o.found)} found)`);
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }

  // ----- report
  const out: string[] = [];
  out.push('sievekv bench/db: db_bench workloads, sievekv and peer engines in one run');
  out.push(`Date:      ${new Date().toISOString()}`);
  out.push(`Node:      ${process.version} (V8 ${process.versions.v8}), ${os.platform()} ${os.arch()}`);
  out.push(`CPU:       ${cpus.length} × ${cpus[0]?.model ?? 'unknown'}; load average (1 min) ${loadAtStart.toFixed(2)} at start, ${os.loadavg()[0]!.toFixed(2)} at end`);
  out.push(`Commit:    ${commit} (at the start)`);
  out.push(`Entries:   N = ${fmtInt(sizes.n)}; keys ${KEY_BYTES} B (%016d); values ${VALUE_BYTES} B (≈ ${VALUE_BYTES / 2} B compressed, db_bench's generator)`);
  out.push(`Reads:     R = ${fmtInt(sizes.reads)} operations for readrandom, readmissing, seekrandom, deleterandom; fillsync N/100; fillbatch ${BATCH_ENTRIES} per batch`);
  out.push('Method:    one node process per column and workload; db_bench order; only the operation loop timed; one operation at a time;');
  out.push(`           reads start once an LSM has < ${L0_COMPACTION_TRIGGER} level-0 files (untimed wait after open, at most ${SETTLE_LIMIT_MS / 1000} s)`);
  if (import.meta.url.endsWith('.ts')) {
    out.push('WARNING:   run from TypeScript sources (tsx): sievekv\'s background worker loads through tsx and flushes slowly; use the compiled build');
  }
  for (const note of notes) out.push(`Note:      ${note}`);
  out.push('Engines:');
  for (const e of engines) out.push(`  ${e.version()}: ${e.options}`);
  out.push('Columns:');
  for (const { column } of columns) out.push(`  ${column.label.padEnd(14)} ${column.calls}${column.readsFrom ? ` (reads ${column.readsFrom}'s database)` : ''}`);
  out.push('Workloads:');
  for (const w of opts.workloads) out.push(`  ${w.name.padEnd(12)} ${w.description}`);
  out.push('');

  const labels = columns.map((c) => c.column.label);
  const isSievekv = (c: Cell): boolean => c.engine === sievekvEngine;
  const table = (title: string, cell: (c: Cell) => string, withRatios: boolean): void => {
    const head = ['workload', ...labels];
    if (withRatios) head.push('sievekv/LevelDB', 'best/LevelDB best', 'best/best peer');
    const rows: string[][] = [];
    for (const w of opts.workloads) {
      const line = results.get(w.name)!;
      const row = [w.name, ...labels.map((l) => (line.has(l) ? cell(line.get(l)!) : '—'))];
      if (withRatios) {
        const cells = [...line.values()];
        const sv = line.get(sievekvEngine.columns[0]!.label);
        const ldb = line.get(leveldbEngine.columns[0]!.label);
        const svBest = best(cells.filter(isSievekv));
        const ldbBest = best(cells.filter((c) => c.engine === leveldbEngine));
        const peerBest = best(cells.filter((c) => !isSievekv(c)));
        const ratio = (a: Cell | undefined, b: Cell | undefined): string => (a && b ? `${(rate(a) / rate(b)).toFixed(2)}×` : '—');
        row.push(ratio(sv, ldb), ratio(svBest, ldbBest), peerBest ? `${ratio(svBest, peerBest)} ${peerBest.column.label}` : '—');
      }
      rows.push(row);
    }
    out.push(title);
    if (opts.markdown) {
      out.push(`| ${head.join(' | ')} |`);
      out.push(`|${head.map((_, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`);
      for (const r of rows) out.push(`| ${r.join(' | ')} |`);
    } else {
      const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
      const fmt = (r: readonly string[]): string => r.map((c, i) => (i === 0 || i === head.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
      out.push(fmt(head));
      for (const r of rows) out.push(fmt(r));
    }
    out.push('');
  };
  table('µs per operation (lower is better); ratios are operations per second, sievekv ÷ peer (above 1: sievekv faster)', (c) => fmtMicros(c.outcome.seconds, c.outcome.ops), true);
  table('operations per second', (c) => fmtRate(c.outcome.seconds, c.outcome.ops), false);
  out.push('sievekv/LevelDB: both async APIs. best/LevelDB best: the faster of each engine\'s columns. best/best peer: sievekv\'s faster column ÷ the fastest peer column (named).');
  out.push(`Checks: fills read back a sample of the keys they wrote; readrandom and seekrandom must find all R keys, readmissing none, readseq/readreverse see N entries.`);
  out.push(problems.length === 0 ? 'All checks passed.' : `PROBLEMS:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  const shapes = [...(results.get('readrandom')?.values() ?? [])].filter((c) => c.outcome.shape !== undefined);
  if (shapes.length > 0) {
    out.push(`LSM files per level when readrandom began: ${shapes.map((c) => `${c.column.label}: ${c.outcome.shape}`).join('; ')}`);
  }
  out.push(`Total ${((performance.now() - started) / 1000).toFixed(0)} s`);
  console.log(out.join('\n'));
  if (problems.length > 0) process.exitCode = 1;
}

main();
