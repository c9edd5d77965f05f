/**
 * bench/db's results as data: everything one run measured, made by bench/db.ts, printed by
 * bench/db/report.ts, written with `--json=PATH` and drawn by bench/chart.ts. Plain JSON (no
 * classes, no Maps), so a file from an earlier run reads back as it was written; `format` names
 * this layout, and a reader refuses a file whose format it does not know.
 *
 * Units are in the field names (bytes, seconds, ms, µs as `micros`). One cell is one column's run
 * of one workload, in its own child process: every figure of a cell comes from that process, except
 * `diskBytes`, which the parent measures once the child has closed the database and exited.
 */
import { readFileSync } from 'node:fs';
import type { StallFigures } from './store.js';
import type { Outcome } from './workloads.js';

/** Persisted in every results file: change it when a field changes meaning or goes away. */
export const RESULTS_FORMAT = 'sievekv-bench-db/1';

/** The engine whose columns the report and chart single out. */
export const SIEVEKV = 'sievekv';
/** The engines the ratios are taken against (issue 10's targets name both). */
export const LEVELDB = 'leveldb';
export const ROCKSDB = 'rocksdb';

export interface RunInfo {
  /** ISO time the report was made (the end of the run). */
  readonly date: string;
  readonly node: string;
  readonly v8: string;
  readonly platform: string;
  readonly arch: string;
  readonly cpus: number;
  readonly cpuModel: string;
  /** 1-minute load average when the run started and when it ended. */
  readonly loadAtStart: number;
  readonly loadAtEnd: number;
  /** Short hash of HEAD at the start, with a note when src/ or bench/db had uncommitted changes. */
  readonly commit: string;
  /** False when run from TypeScript sources through tsx (sievekv's worker then flushes slowly). */
  readonly compiled: boolean;
  readonly totalSeconds: number;
}

/** How reads were prepared (the header states it). */
export interface MethodInfo {
  /** Reads start once an LSM's level 0 holds fewer files than this (the compaction trigger)… */
  readonly settleBelowL0Files: number;
  /** …or after this long. */
  readonly settleLimitSeconds: number;
}

export interface SizeInfo {
  readonly n: number;
  readonly reads: number;
  readonly batchEntries: number;
  readonly keyBytes: number;
  readonly valueBytes: number;
}

export interface EngineInfo {
  readonly name: string;
  readonly version: string;
  readonly options: string;
  /** What the engine holds in memory, to read its RSS by. */
  readonly memory: string;
}

export interface ColumnInfo {
  readonly label: string;
  /** EngineInfo.name of the engine the column drives. */
  readonly engine: string;
  readonly style: 'async' | 'sync';
  readonly calls: string;
  readonly readsFrom?: string;
}

export interface WorkloadInfo {
  readonly name: string;
  readonly kind: 'write' | 'read';
  readonly description: string;
}

/** What one child process measured around its workload (all of a cell but its names and disk). */
export interface ChildMeasures extends Outcome {
  /** The child's resident set size after loading the bench's modules, before any data or open. */
  readonly startRssBytes: number;
  /** The child's peak resident set size (process.resourceUsage().maxRSS), all threads, to its end. */
  readonly maxRssBytes: number;
  /** Time of the database's close() after the workload (pending writes, flushes, merges included). */
  readonly closeMs: number;
  /** After overwrite only: time to open the closed directory again, in the same process… */
  readonly reopenMs?: number;
  /** …or why that open failed. */
  readonly reopenError?: string;
  /** Writers' stalls during the workload (the difference over it), for engines that count them. */
  readonly stalls?: StallFigures;
}

export interface CellResult extends ChildMeasures {
  readonly workload: string;
  readonly column: string;
  /** Write workloads: total bytes of the files in the database's directory once it was closed. */
  readonly diskBytes?: number;
}

export interface BenchResults {
  readonly format: typeof RESULTS_FORMAT;
  readonly run: RunInfo;
  readonly sizes: SizeInfo;
  readonly method: MethodInfo;
  readonly engines: readonly EngineInfo[];
  /** In report order. */
  readonly columns: readonly ColumnInfo[];
  /** In run order. */
  readonly workloads: readonly WorkloadInfo[];
  readonly cells: readonly CellResult[];
  /** Failed checks and children that gave no result. */
  readonly problems: readonly string[];
  /** Peers skipped, and the like. */
  readonly notes: readonly string[];
}

/** Operations per second of a cell. */
export function opsPerSecond(c: Outcome): number {
  return c.ops / c.seconds;
}

/** The cell of `column` for `workload`, if that column ran it and gave a result. */
export function cellOf(results: BenchResults, workload: string, column: string): CellResult | undefined {
  return results.cells.find((c) => c.workload === workload && c.column === column);
}

/** The column that writes for `engine` (its first without `readsFrom`), if the run had it. */
export function writingColumn(results: BenchResults, engine: string): ColumnInfo | undefined {
  return results.columns.find((c) => c.engine === engine && c.readsFrom === undefined);
}

export function isSievekv(results: BenchResults, column: string): boolean {
  return results.columns.find((c) => c.label === column)?.engine === SIEVEKV;
}

/** Total waits and µs over all reasons. */
export function stallTotal(s: StallFigures): { micros: number; count: number } {
  let micros = 0;
  let count = 0;
  for (const r of Object.values(s)) {
    micros += r.micros;
    count += r.count;
  }
  return { micros, count };
}

/** Reads a results file; throws if it is not one this code knows. */
export function readResults(path: string): BenchResults {
  const data = JSON.parse(readFileSync(path, 'utf8')) as Partial<BenchResults>;
  if (data.format !== RESULTS_FORMAT) throw new Error(`${path}: not a ${RESULTS_FORMAT} results file (format ${String(data.format)})`);
  return data as BenchResults;
}
