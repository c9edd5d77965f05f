/**
 * bench/db's text report: a pure function of a run's results (bench/db/results.ts), printed by
 * bench/db.ts at the end of a run — as plain columns, or with `--markdown` as tables for
 * BENCHMARKS.md. Layout: the header that states the setup, the speed tables with their ratios,
 * the checks, then the process figures (peak RSS, disk after each write, close and reopen, sievekv's
 * writers' stalls), and last issue 10's targets, each measured figure beside its target.
 *
 * Ratios are sievekv ÷ peer: operations per second for speed (above 1: sievekv faster), bytes for
 * disk and memory and milliseconds for close and reopen (below 1: sievekv smaller or quicker).
 */
import {
  cellOf,
  isSievekv,
  LEVELDB,
  opsPerSecond,
  ROCKSDB,
  SIEVEKV,
  stallTotal,
  writingColumn,
  type BenchResults,
  type CellResult,
  type ColumnInfo,
} from './results.js';
import type { StallReason } from './store.js';

/** Issue 10: batched writes at least as fast as LevelDB's and RocksDB's, async API and sync twins. */
const BATCHED_WRITES = ['fillbatch', 'fillrandombatch', 'overwritebatch'] as const;
const BATCHED_TARGET = 1.0;
/** Issue 10: random single puts and deletes keep their lead over LevelDB. */
const SINGLE_WRITES = ['fillrandom', 'overwrite', 'deleterandom'] as const;
const SINGLE_TARGET = 3.0;
/** Issue 10: close and reopen of a 1,000,000-key database each under this. */
const CLOSE_REOPEN_TARGET_MS = 50;
const CLOSE_REOPEN_TARGET_N = 1_000_000;
/** Disk and RSS: the workload after which disk is compared (fillrandom, then overwrite, closed). */
const DISK_AFTER = 'overwrite';

const STALL_REASONS: readonly { reason: StallReason; label: string }[] = [
  { reason: 'memtableFull', label: 'memtable full' },
  { reason: 'l0Slowdown', label: 'L0 slowdown' },
  { reason: 'l0Stop', label: 'L0 stop' },
];

const fmtInt = (x: number): string => x.toLocaleString('en-US');
const fmtMB = (bytes: number): string => (bytes / 1e6).toFixed(1);
const fmtRatio = (x: number): string => `${x.toFixed(2)}×`;
const mark = (met: boolean): string => (met ? '✓' : '✗');

function fmtMs(ms: number): string {
  return ms >= 100 ? fmtInt(Math.round(ms)) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2);
}

function fmtMicros(seconds: number, ops: number): string {
  const us = (seconds * 1e6) / ops;
  return us >= 100 ? us.toFixed(0) : us >= 10 ? us.toFixed(1) : us.toFixed(2);
}

/** Operations per second as "161 k", "1.04 M". */
export function fmtRate(opsPerSec: number): string {
  const r = opsPerSec;
  if (r >= 1e6) return `${(r / 1e6).toFixed(2)} M`;
  if (r >= 1e3) return `${(r / 1e3).toFixed(r >= 1e5 ? 0 : 1)} k`;
  return r.toFixed(0);
}

/** The fastest of `cells`. */
function best(cells: readonly CellResult[]): CellResult | undefined {
  let top: CellResult | undefined;
  for (const c of cells) if (top === undefined || opsPerSecond(c) > opsPerSecond(top)) top = c;
  return top;
}

/** Peak RSS over every workload `columns` ran. */
function peakRss(r: BenchResults, columns: readonly ColumnInfo[]): number | undefined {
  const labels = new Set(columns.map((c) => c.label));
  let peak: number | undefined;
  for (const c of r.cells) if (labels.has(c.column)) peak = Math.max(peak ?? 0, c.maxRssBytes);
  return peak;
}

/** Collects report lines; tables come out as aligned columns or as markdown. */
class Lines {
  readonly out: string[] = [];
  constructor(readonly markdown: boolean) {}

  push(...lines: string[]): void {
    this.out.push(...lines);
  }

  /**
   * A table; the columns at `leftAligned` (text; a negative index counts from the end) are aligned
   * left, the others (figures) right.
   */
  table(title: string, head: readonly string[], rows: readonly (readonly string[])[], leftAligned: readonly number[] = [0]): void {
    const left = (i: number): boolean => leftAligned.includes(i) || leftAligned.includes(i - head.length);
    this.out.push(title);
    if (this.markdown) {
      this.out.push('', `| ${head.join(' | ')} |`);
      this.out.push(`|${head.map((_, i) => (left(i) ? ' --- ' : ' ---: ')).join('|')}|`);
      for (const r of rows) this.out.push(`| ${r.join(' | ')} |`);
    } else {
      const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
      const fmt = (r: readonly string[]): string => r.map((c, i) => (left(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
      this.out.push(fmt(head));
      for (const r of rows) this.out.push(fmt(r));
    }
    this.out.push('');
  }
}

export function formatReport(r: BenchResults, markdown: boolean): string {
  const out = new Lines(markdown);
  header(r, out);
  speedTables(r, out);
  checks(r, out);
  processTables(r, out);
  stalls(r, out);
  perColumn(r, out);
  targets(r, out);
  out.push(`Total ${r.run.totalSeconds.toFixed(0)} s`);
  return out.out.join('\n');
}

function header(r: BenchResults, out: Lines): void {
  const { run, sizes, method } = r;
  out.push(
    'sievekv bench/db: db_bench workloads, sievekv and peer engines in one run',
    `Date:      ${run.date}`,
    `Node:      ${run.node} (V8 ${run.v8}), ${run.platform} ${run.arch}`,
    `CPU:       ${run.cpus} × ${run.cpuModel}; load average (1 min) ${run.loadAtStart.toFixed(2)} at start, ${run.loadAtEnd.toFixed(2)} at end`,
    `Commit:    ${run.commit} (at the start)`,
    `Entries:   N = ${fmtInt(sizes.n)}; keys ${sizes.keyBytes} B (%016d); values ${sizes.valueBytes} B (≈ ${sizes.valueBytes / 2} B compressed, db_bench's generator)`,
    `Reads:     R = ${fmtInt(sizes.reads)} operations for readrandom, readmissing (and readmissingearly), seekrandom, deleterandom; fillsync N/100; fillbatch ${sizes.batchEntries} per batch`,
    'Method:    one node process per column and workload; db_bench order; only the operation loop timed; one operation at a time;',
    `           reads start once an LSM has < ${method.settleBelowL0Files} level-0 files (untimed wait after open, at most ${method.settleLimitSeconds} s),`,
    '           but readmissingearly, at once; a column that reads another\'s database reads a copy taken before that column\'s process',
    'Process:   peak RSS: process.resourceUsage().maxRSS of each child (all its threads: a worker\'s heap, a native engine\'s own threads),',
    '           from its start to its exit (open, the workload, the read-back, close; after overwrite also the reopen); MB = 10^6 bytes',
    '           disk: total bytes of the files in the database\'s directory after a write workload\'s process closed it and exited',
    `           close: time of close() after the workload; reopen (after ${DISK_AFTER}): time to open the closed directory again in the same`,
    '           process (modules loaded), then closed untimed',
    '           stalls: sievekv.stats\' writers\' waits (µs and count, by reason) over the timed loop',
  );
  if (!run.compiled) {
    out.push('WARNING:   run from TypeScript sources (tsx): sievekv\'s background worker loads through tsx and flushes slowly; use the compiled build');
  }
  for (const note of r.notes) out.push(`Note:      ${note}`);
  out.push('Engines:');
  for (const e of r.engines) out.push(`  ${e.version}: ${e.options}`);
  out.push('Memory (what each engine holds, beside the node runtime and the bench\'s own data: see "RSS at start" below):');
  for (const e of r.engines) out.push(`  ${e.name.padEnd(8)} ${e.memory}`);
  out.push('Columns:');
  for (const c of r.columns) out.push(`  ${c.label.padEnd(14)} ${c.calls}${c.readsFrom ? ` (reads ${c.readsFrom}'s database)` : ''}`);
  out.push('Workloads:');
  const nameWidth = Math.max(12, ...r.workloads.map((w) => w.name.length));
  for (const w of r.workloads) out.push(`  ${w.name.padEnd(nameWidth)} ${w.description}`);
  out.push('');
}

/** A table with a row per workload and a cell per column (— where a column has no result). */
function workloadTable(r: BenchResults, out: Lines, title: string, cell: (c: CellResult) => string | undefined, workloads = r.workloads.map((w) => w.name)): void {
  const labels = r.columns.map((c) => c.label);
  const rows = workloads.map((w) => [w, ...labels.map((l) => {
    const c = cellOf(r, w, l);
    return (c === undefined ? undefined : cell(c)) ?? '—';
  })]);
  out.table(title, ['workload', ...labels], rows);
}

function speedTables(r: BenchResults, out: Lines): void {
  const labels = r.columns.map((c) => c.label);
  const engineOf = new Map(r.columns.map((c) => [c.label, c.engine]));
  const sv = writingColumn(r, SIEVEKV)?.label;
  const ldb = writingColumn(r, LEVELDB)?.label;
  const ratio = (a: CellResult | undefined, b: CellResult | undefined): string => (a && b ? fmtRatio(opsPerSecond(a) / opsPerSecond(b)) : '—');
  // sievekv's columns with options other than the defaults (reading another column's database) are shown, not counted as its best.
  const variants = new Set(r.columns.filter((c) => c.engine === SIEVEKV && c.readsFrom !== undefined).map((c) => c.label));
  const rows = r.workloads.map((w) => {
    const cells = r.cells.filter((c) => c.workload === w.name);
    const svBest = best(cells.filter((c) => engineOf.get(c.column) === SIEVEKV && !variants.has(c.column)));
    const ldbBest = best(cells.filter((c) => engineOf.get(c.column) === LEVELDB));
    const peerBest = best(cells.filter((c) => engineOf.get(c.column) !== SIEVEKV));
    const at = (label: string | undefined): CellResult | undefined => (label === undefined ? undefined : cellOf(r, w.name, label));
    return [
      w.name,
      ...labels.map((l) => {
        const c = cellOf(r, w.name, l);
        return c === undefined ? '—' : fmtMicros(c.seconds, c.ops);
      }),
      ratio(at(sv), at(ldb)),
      ratio(svBest, ldbBest),
      peerBest ? `${ratio(svBest, peerBest)} ${peerBest.column}` : '—',
    ];
  });
  out.table(
    'µs per operation (lower is better); ratios are operations per second, sievekv ÷ peer (above 1: sievekv faster)',
    ['workload', ...labels, 'sievekv/LevelDB', 'best/LevelDB best', 'best/best peer'],
    rows,
    [0, -1],
  );
  workloadTable(r, out, 'operations per second', (c) => fmtRate(opsPerSecond(c)));
  out.push("sievekv/LevelDB: both async APIs. best/LevelDB best: the faster of each engine's columns (sievekv's with default options: not `sievekv mmap`). best/best peer: sievekv's faster such column ÷ the fastest peer column (named).");
}

function checks(r: BenchResults, out: Lines): void {
  out.push('Checks: fills read back a sample of the keys they wrote; readrandom and seekrandom must find all R keys, readmissing and readmissingearly none, readseq/readreverse see N entries.');
  out.push(r.problems.length === 0 ? 'All checks passed.' : `PROBLEMS:\n${r.problems.map((p) => `  ${p}`).join('\n')}`);
  for (const workload of ['readmissingearly', 'readrandom']) {
    const shapes = r.cells.filter((c) => c.workload === workload && c.shape !== undefined);
    if (shapes.length > 0) out.push(`LSM files per level when ${workload} began: ${shapes.map((c) => `${c.column}: ${c.shape}`).join('; ')}`);
  }
  out.push('');
}

function processTables(r: BenchResults, out: Lines): void {
  workloadTable(r, out, 'Peak RSS of each process, MB (open, workload, close; lower is better)', (c) => fmtMB(c.maxRssBytes));
  const writes = r.workloads.filter((w) => w.kind === 'write').map((w) => w.name);
  workloadTable(r, out, 'Disk after each write workload, closed, MB (fillrandom, overwrite, overwritebatch and deleterandom write one database in turn)', (c) => (c.diskBytes === undefined ? undefined : fmtMB(c.diskBytes)), writes);
  workloadTable(r, out, 'close() after the workload, ms', (c) => fmtMs(c.closeMs));
  const starts = r.cells.map((c) => c.startRssBytes);
  if (starts.length > 0) out.push(`RSS at start of a child (node, the bench's modules, no data, nothing open): ${fmtMB(Math.min(...starts))}–${fmtMB(Math.max(...starts))} MB`, '');
}

/** "412 ms (29% of the loop): memtable full 100 ms (10), L0 slowdown 312 ms (300)", or "none". */
function describeStalls(c: CellResult): string {
  const s = c.stalls!;
  const total = stallTotal(s);
  if (total.count === 0) return 'none';
  const parts = STALL_REASONS.filter(({ reason }) => s[reason].count > 0).map(({ reason, label }) => `${label} ${fmtMs(s[reason].micros / 1000)} ms (${fmtInt(s[reason].count)})`);
  const share = total.micros / 1e6 / c.seconds;
  return `${fmtMs(total.micros / 1000)} ms, ${(share * 100).toFixed(1)}% of the loop: ${parts.join(', ')}`;
}

function stalls(r: BenchResults, out: Lines): void {
  const cells = r.cells.filter((c) => c.stalls !== undefined && isSievekv(r, c.column));
  if (cells.length === 0) return;
  out.push("sievekv writers' stalls during the timed loop (sievekv.stats): time waited, its share of the loop, by reason (number of waits)");
  const stalled = cells.filter((c) => stallTotal(c.stalls!).count > 0);
  const width = Math.max(0, ...stalled.map((c) => c.workload.length));
  const colWidth = Math.max(0, ...stalled.map((c) => c.column.length));
  for (const c of stalled) out.push(`  ${c.workload.padEnd(width)}  ${c.column.padEnd(colWidth)}  ${describeStalls(c)}`);
  const calm = r.workloads
    .map((w) => ({ w: w.name, columns: cells.filter((c) => c.workload === w.name && !stalled.includes(c)).map((c) => c.column) }))
    .filter((x) => x.columns.length > 0)
    .map((x) => `${x.w} (${x.columns.join(', ')})`);
  if (calm.length > 0) out.push(`  no stalls${stalled.length > 0 ? ' in the other loops' : ''}: ${calm.join('; ')}`);
  out.push('');
}

function perColumn(r: BenchResults, out: Lines): void {
  const ldb = writingColumn(r, LEVELDB);
  const ldbDisk = ldb === undefined ? undefined : cellOf(r, DISK_AFTER, ldb.label)?.diskBytes;
  const ldbRss = peakRss(r, r.columns.filter((c) => c.engine === LEVELDB)); // over LevelDB's columns, as the target
  const rows = r.columns.map((col) => {
    const rss = peakRss(r, [col]);
    const after = cellOf(r, DISK_AFTER, col.label);
    const disk = after?.diskBytes;
    return [
      col.label,
      rss === undefined ? '—' : fmtMB(rss),
      rss !== undefined && ldbRss !== undefined ? fmtRatio(rss / ldbRss) : '—',
      disk === undefined ? '—' : fmtMB(disk),
      disk !== undefined && ldbDisk !== undefined ? fmtRatio(disk / ldbDisk) : '—',
      after === undefined ? '—' : fmtMs(after.closeMs),
      after?.reopenMs === undefined ? '—' : fmtMs(after.reopenMs),
    ];
  });
  out.table(
    `Per column: peak RSS over all its processes; after fillrandom + ${DISK_AFTER} (N = ${fmtInt(r.sizes.n)}, no compactRange): disk once closed, close() and reopen, ms`,
    ['column', 'peak RSS MB', '÷ LevelDB', 'disk MB', '÷ LevelDB', 'close ms', 'reopen ms'],
    rows,
  );
}

/** Issue 10's targets, each measured figure beside its target, ✓ or ✗. */
function targets(r: BenchResults, out: Lines): void {
  // The columns with default options that write their own databases (not a reads-only variant).
  const sievekvColumns = r.columns.filter((c) => c.engine === SIEVEKV && c.readsFrom === undefined);
  const ldb = writingColumn(r, LEVELDB);
  const rocks = writingColumn(r, ROCKSDB);
  if (sievekvColumns.length === 0) return;
  out.push("Issue 10's targets (✓ met, ✗ not; — not measured in this run)");

  // Speed: a matrix of ratios, each sievekv column against each peer's writing column.
  const peers = [ldb, rocks].filter((c): c is ColumnInfo => c !== undefined);
  const head = ['workload'];
  for (const s of sievekvColumns) for (const p of peers) head.push(`${s.label} ÷ ${p.label}`);
  head.push('target');
  const speedRow = (workload: string, target: number, against: readonly string[]): string[] => {
    const row = [workload];
    for (const s of sievekvColumns) {
      for (const p of peers) {
        const a = cellOf(r, workload, s.label);
        const b = cellOf(r, workload, p.label);
        if (a === undefined || b === undefined) {
          row.push('—');
          continue;
        }
        const x = opsPerSecond(a) / opsPerSecond(b);
        row.push(against.includes(p.engine) ? `${fmtRatio(x)} ${mark(x >= target)}` : fmtRatio(x));
      }
    }
    row.push(`≥ ${target.toFixed(1)}× ${against.map((e) => (e === LEVELDB ? 'LevelDB' : 'RocksDB')).join(' and ')}`);
    return row;
  };
  const present = new Set(r.workloads.map((w) => w.name));
  const rows = [
    ...BATCHED_WRITES.filter((w) => present.has(w)).map((w) => speedRow(w, BATCHED_TARGET, [LEVELDB, ROCKSDB])),
    ...SINGLE_WRITES.filter((w) => present.has(w)).map((w) => speedRow(w, SINGLE_TARGET, [LEVELDB])),
  ];
  if (rocks === undefined) out.push('RocksDB is not in this run: the batched writes\' target against it is not measured.');
  if (rows.length > 0 && peers.length > 0) {
    out.table(
      `Speed, operations per second, sievekv ÷ peer: batches of ${fmtInt(r.sizes.batchEntries)} (fillbatch = fillseq in batches) with the async API and the sync twins; single random puts and deletes`,
      head,
      rows,
      [0, -1],
    );
  } else {
    out.push('Speed: — (needs the batched or single random writes, and LevelDB or RocksDB)');
  }

  // Disk, memory, close and reopen, stalls: a row per sievekv column, LevelDB's figure beside it.
  const rowsOther: string[][] = [];
  const row = (target: string, column: string, mine: number | undefined, theirs: number | undefined, fmt: (x: number) => string, met: ((x: number) => boolean) | null): void => {
    rowsOther.push([
      target,
      column,
      mine === undefined ? '—' : fmt(mine),
      theirs === undefined ? '—' : fmt(theirs),
      mine !== undefined && theirs !== undefined ? fmtRatio(mine / theirs) : '—',
      mine === undefined || met === null ? '—' : mark(met(mine)),
    ]);
  };
  const mb = (x: number): string => `${fmtMB(x)} MB`;
  const ms = (x: number): string => `${fmtMs(x)} ms`;
  const ldbAfter = ldb === undefined ? undefined : cellOf(r, DISK_AFTER, ldb.label);
  for (const s of sievekvColumns) {
    const disk = cellOf(r, DISK_AFTER, s.label)?.diskBytes;
    const theirs = ldbAfter?.diskBytes;
    row(`disk after fillrandom + ${DISK_AFTER}, closed ≤ LevelDB's`, s.label, disk, theirs, mb, theirs === undefined ? null : (x) => x <= theirs);
  }
  const svRss = peakRss(r, sievekvColumns);
  const ldbRss = peakRss(r, r.columns.filter((c) => c.engine === LEVELDB));
  row("peak RSS over the run ≤ LevelDB's", 'default options', svRss, ldbRss, mb, ldbRss === undefined ? null : (x) => x <= ldbRss);
  const atN = r.sizes.n === CLOSE_REOPEN_TARGET_N ? '' : ` (target for N = ${fmtInt(CLOSE_REOPEN_TARGET_N)})`;
  for (const s of sievekvColumns) {
    const c = cellOf(r, DISK_AFTER, s.label);
    row(`close after ${DISK_AFTER} < ${CLOSE_REOPEN_TARGET_MS} ms${atN}`, s.label, c?.closeMs, ldbAfter?.closeMs, ms, (x) => x < CLOSE_REOPEN_TARGET_MS);
  }
  for (const s of sievekvColumns) {
    const c = cellOf(r, DISK_AFTER, s.label);
    row(`reopen after ${DISK_AFTER} < ${CLOSE_REOPEN_TARGET_MS} ms${atN}`, s.label, c?.reopenMs, ldbAfter?.reopenMs, ms, (x) => x < CLOSE_REOPEN_TARGET_MS);
  }
  for (const s of sievekvColumns) {
    const writes = r.cells.filter((c) => c.column === s.label && c.stalls !== undefined);
    const micros = writes.reduce((sum, c) => sum + stallTotal(c.stalls!).micros, 0);
    const batched = writes.filter((c) => (BATCHED_WRITES as readonly string[]).includes(c.workload));
    const batchedMicros = batched.reduce((sum, c) => sum + stallTotal(c.stalls!).micros, 0);
    if (writes.length === 0) continue;
    row("writers' stalls, all write loops (reported)", s.label, micros / 1000, undefined, ms, null);
    if (batched.length > 0) row("writers' stalls, batched write loops (reported)", s.label, batchedMicros / 1000, undefined, ms, null);
  }
  out.table('Space, memory, close and reopen (ratio: sievekv ÷ LevelDB; below 1: smaller or quicker)', ['target', 'column', 'sievekv', 'LevelDB', 'ratio', 'met'], rowsOther, [0, 1]);
}
