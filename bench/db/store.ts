/**
 * The seam between bench/db's workloads and the engines they measure: a `Store` is one open
 * database driven in one calling style. `async` stores return promises that the workload loops
 * await one at a time (what most programs write); `sync` stores return their results directly
 * (the synchronous twins some engines offer). A loop never awaits a sync store, so the figures of
 * a sync column carry no promise or microtask cost.
 *
 * Keys and values are Buffers owned by the caller; an engine may not keep them past the call.
 * Every value handed back is an owned Buffer (each engine's normal `get`, not a borrowed view),
 * so all engines pay for the copy a program would get.
 *
 * Durability is chosen when the store is opened (`synced`): unsynced stores let a write return
 * once the OS has it (a process crash keeps it, a machine crash may not), synced ones once it is
 * on the disk. That is db_bench's "async mode" and "sync mode".
 */

/** Why a writer waited, as LevelDB counts its stalls (sievekv's `sievekv.stats` names). */
export type StallReason = 'memtableFull' | 'l0Slowdown' | 'l0Stop';

/** Writers' waits since the database was opened: microseconds and number of waits, by reason. */
export type StallFigures = Record<StallReason, { micros: number; count: number }>;

/** Entries and key + value bytes a scan read. */
export interface ScanCount {
  entries: number;
  bytes: number;
}

export interface AsyncStore {
  readonly style: 'async';
  put(key: Buffer, value: Buffer): Promise<unknown>;
  /** Writes the entries atomically, as one batch or transaction. */
  batch(keys: readonly Buffer[], values: readonly Buffer[]): Promise<unknown>;
  get(key: Buffer): Promise<Buffer | undefined>;
  del(key: Buffer): Promise<unknown>;
  /** Reads every entry through one iterator, ascending (or descending with `reverse`). */
  scan(reverse: boolean): Promise<ScanCount>;
  /** A new iterator, seeked to `key`, one entry read, closed: the key it found, if any. */
  seek(key: Buffer): Promise<Buffer | undefined>;
  /** Files per level, for an LSM (e.g. "L0 2, L1 5, L2 9"): the shape reads run on. */
  shape?(): string;
  /** Level-0 files now, for an LSM: reads wait until compaction brings it below the trigger. */
  level0Files?(): number;
  /** Writers' stalls since open, for an engine that counts them by reason. */
  stalls?(): StallFigures;
  close(): Promise<void>;
}

/** As AsyncStore, returning directly. Engines without a synchronous twin leave a method out. */
export interface SyncStore {
  readonly style: 'sync';
  put?(key: Buffer, value: Buffer): void;
  batch?(keys: readonly Buffer[], values: readonly Buffer[]): void;
  get(key: Buffer): Buffer | undefined;
  del?(key: Buffer): void;
  scan?(reverse: boolean): ScanCount;
  seek?(key: Buffer): Buffer | undefined;
  shape?(): string;
  level0Files?(): number;
  stalls?(): StallFigures;
  close(): Promise<void>;
}

export type Store = AsyncStore | SyncStore;

/** "L0 2, L1 5" from a files-at-level getter (levels 0–6, empty ones left out). */
export function levelShape(filesAt: (level: number) => number): string {
  const parts: string[] = [];
  for (let level = 0; level < 7; level++) {
    const n = filesAt(level);
    if (n > 0) parts.push(`L${level} ${n}`);
  }
  return parts.length === 0 ? 'no table files' : parts.join(', ');
}
export type Style = Store['style'];

/** Which workloads a column runs: everything, only the writes, only the reads, or only point reads. */
export type Coverage = 'all' | 'writes' | 'reads' | 'point-reads';

/**
 * One column of the report: an engine in one calling style. A column with `readsFrom` fills no
 * database of its own and reads the one the named column (same engine) filled.
 */
export interface Column {
  /** Unique, short: used as the column heading. */
  readonly label: string;
  readonly style: Style;
  readonly coverage: Coverage;
  readonly readsFrom?: string;
  /** What the column calls, for the header (e.g. "await db.put / await db.get / for await"). */
  readonly calls: string;
  /** Options of the engine's own for this column's opens (none: its defaults). */
  readonly openOptions?: object;
}

/** An engine under test: how to open it, and what to say about it in the header. */
export interface Engine {
  /** Short name: also the `--engines` filter value (lower case). */
  readonly name: string;
  readonly columns: readonly Column[];
  /** The bench/peers package it needs (absent: always available). */
  readonly peer?: string;
  /** Versions of the package and of the engine inside it, e.g. "classic-level 3.0.0 (LevelDB 1.20)". */
  version(): string;
  /** The options every database is opened with, for the header. */
  readonly options: string;
  /** What the engine holds in the process's memory (for reading its peak RSS), for the header. */
  readonly memory: string;
  /**
   * Opens (creating if missing) the database in `dir` for `column` (one of `columns`, which may
   * name options of its own); `synced`: every write is made durable.
   */
  open(dir: string, column: Column, synced: boolean): Promise<Store>;
}
